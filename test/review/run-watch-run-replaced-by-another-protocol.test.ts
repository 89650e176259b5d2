/**
 * Review (runs and live events). lh-run-watch told a run replaced by another between two polls only by their start
 * times. A run first seen before it had one (Scheduling, Loading: the instrument sends 0001-… there), aborted at the
 * instrument and followed by a run of another protocol before the next poll, was taken for the same run: the first run
 * was never reported finished, and the second was reported, when it ended, under the first run's protocol (its record
 * looked up by that protocol's name). README: "Output 2: once per finished run ... msg.protocolName, msg.protocolId".
 * A run's protocol does not change while it runs: two protocol ids are two runs.
 *
 * Model-based, seeded: a history of runs (random protocols, a start time from Running on, a few seen only at
 * Scheduling/Loading and aborted), sampled by polls at random moments (most states, and most Idles between runs,
 * missed). Each run a poll saw is reported finished once, under its own protocol, unless nothing a poll saw can tell
 * it from the run before it (the same protocol and no two start times: the instrument's status names no run).
 */
import assert from 'node:assert/strict';

import { parseRunStatus, type RunStateName } from '../../src/client';
import { newMemory, observe } from '../../src/nodes/runs/run-decisions';
import { Rng } from '../support/prng';

const NOT_SET = '0001-01-01T00:00:00';
const T0 = Date.parse('2026-03-01T10:00:00Z');

interface Sample {
  /** index of the run, or -1 for Idle between runs */
  run: number;
  state: RunStateName;
  protocolId: number;
  startTime: string;
}

function history(rng: Rng): { protocols: number[]; timeline: Sample[] } {
  const protocols: number[] = [];
  const timeline: Sample[] = [{ run: -1, state: 'Idle', protocolId: 0, startTime: NOT_SET }];
  const runs = rng.int(1, 6);
  for (let r = 0; r < runs; r++) {
    const protocolId = rng.int(1, 3);
    protocols.push(protocolId);
    const start = new Date(T0 + r * 3_600_000).toISOString().replace('.000Z', '');
    const aborted = rng.chance(0.4); // aborted at Loading, before it had a start time
    const states: RunStateName[] = aborted
      ? ['Scheduling', 'Scheduled', 'Loading', 'Aborting']
      : ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Paused', 'Running'];
    for (const state of states) {
      const started = !aborted && state !== 'Scheduling' && state !== 'Scheduled' && state !== 'Loading';
      for (let k = rng.int(1, 3); k > 0; k--) timeline.push({ run: r, state, protocolId, startTime: started ? start : NOT_SET });
    }
    timeline.push({ run: -1, state: 'Idle', protocolId: 0, startTime: NOT_SET });
  }
  return { protocols, timeline };
}

describe('lh-run-watch: a run replaced by a run of another protocol between two polls (review, model)', function () {
  it('property: each run seen is reported finished once, under its own protocol; 500 seeded histories', function () {
    for (let seed = 1; seed <= 500; seed++) {
      const rng = new Rng(seed);
      const { protocols, timeline } = history(rng);
      // polls: a random subset of the moments (each kept with probability 1/3), and the final Idle
      const polled = timeline.filter((_, i) => i === timeline.length - 1 || rng.chance(1 / 3));
      const memory = newMemory();
      const finished: { protocolId: number | null; startTime: string | null }[] = [];
      polled.forEach((s, i) => {
        const status = parseRunStatus({
          protocolRunState: s.state,
          protocolId: s.protocolId,
          protocolName: s.run < 0 ? '' : `Protocol ${s.protocolId}`,
          startTime: s.startTime,
          estimatedEndTime: NOT_SET,
        });
        const seen = observe(memory, status, T0 + i * 1000);
        if (seen.finished) finished.push({ protocolId: seen.finished.run.protocolId, startTime: seen.finished.run.startTime });
      });

      // what a poll could tell: the runs seen, merged where nothing seen tells one from the one before it
      const groups: { protocolId: number; startTime?: string; pastLoading?: boolean; aborting?: boolean }[] = [];
      let idleBetween = true;
      for (const s of polled) {
        if (s.run < 0) {
          idleBetween = true;
          continue;
        }
        const group = groups[groups.length - 1];
        const start = s.startTime === NOT_SET ? undefined : s.startTime;
        // (a run seen Scheduled without a start time after one seen only being prepared, and then running with another
        // start than the group's, is told apart only then: it is merged until its start time shows)
        // (a run never goes back from Running, Paused or Aborting to Scheduling, Scheduled or Loading, and a run
        // aborted before it had a start time never gets one: review73)
        const preparing = s.state === 'Scheduling' || s.state === 'Scheduled' || s.state === 'Loading';
        const other =
          idleBetween ||
          group.protocolId !== s.protocolId ||
          (group.startTime !== undefined && start !== undefined && group.startTime !== start) ||
          (group.pastLoading === true && preparing) ||
          (group.aborting === true && group.startTime === undefined && start !== undefined);
        if (other) groups.push({ protocolId: protocols[s.run], startTime: start });
        else if (group.startTime === undefined) group.startTime = start;
        if (!preparing) groups[groups.length - 1].pastLoading = true;
        if (s.state === 'Aborting') groups[groups.length - 1].aborting = true;
        idleBetween = false;
      }
      const where = `seed ${seed}: polled ${polled.map((s) => (s.run < 0 ? 'Idle' : `${s.run}:${s.protocolId}:${s.state}`)).join(' ')}`;
      assert.deepEqual(
        finished.map((f) => f.protocolId),
        groups.map((g) => g.protocolId),
        `finished runs (by protocol) — ${where}`,
      );
    }
  });
});
