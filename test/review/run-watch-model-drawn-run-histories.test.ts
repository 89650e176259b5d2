/**
 * Review (runs: start, watch, records), model-based. lh-run-watch's decisions (run-decisions.ts, as its poll applies
 * them: a draft observed, committed only when its msgs go out) over drawn instrument histories: runs of two protocols
 * (the same one twice in a row too) that complete, are aborted while prepared or while running, fail after an error
 * handling, end in a word not known, or vanish when the instrument restarts mid-run (no record); every run of the
 * simulator's kind leaves a record (an abort while prepared too). The watch polls at drawn moments (most states, and
 * most Idles between runs, missed); a poll may fail (no answer), be lost to a redeploy (decided, never committed), or
 * come after a restart of Node-RED (the memory starts empty: README, what a restart keeps). The record list may fail
 * to be read at first sight or at the end.
 *
 * Invariants: a run is reported finished only once it has ended (never while it goes on), at most once, under its own
 * protocol; every run a committed poll saw is reported once by the last Idle poll (one that ended during a restart
 * of Node-RED aside); two runs share one report only where nothing seen tells them apart (the same protocol, the
 * earlier one never seen past Loading, no Idle seen between: a run first seen being prepared has no start time); a report's record is the record of a run it reports,
 * its result the record's word mapped (never `completed` without a record that says so); a run seen running whose
 * record the instrument lists at its end (both lists read) is reported with that record.
 *
 * LH_SEED replays a seed, LH_CASES draws more histories (default 300; they take well under a second).
 */
import assert from 'node:assert/strict';

import { mapRunResult, parseRunStatus, type RunStateName } from '../../src/client';
import {
  commitMemory,
  draftMemory,
  matchRecord,
  newMemory,
  observe,
  resultOf,
  type RunMemory,
  type RunRecordLike,
} from '../../src/nodes/runs/run-decisions';
import { Rng } from '../support/prng';

const NOT_SET = '0001-01-01T00:00:00';
const T0 = Date.parse('2026-03-01T10:00:00Z');
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;

type Ending = 'completed' | 'aborted-prepared' | 'aborted-running' | 'failed' | 'odd-word' | 'instrument-restart';

interface ModelRun {
  index: number;
  protocolId: number;
  /** the instrument's start (zone-less, as it sends it), from Running on; undefined: it never ran */
  start?: string;
  ending: Ending;
  record?: RunRecordLike;
}

interface Moment {
  /** the run active at this moment, -1 when Idle */
  run: number;
  state: RunStateName;
  /** the records the instrument lists at this moment */
  records: RunRecordLike[];
}

const WORD: Record<Exclude<Ending, 'instrument-restart'>, string> = {
  completed: 'Completed',
  'aborted-prepared': 'Aborted',
  'aborted-running': 'Aborted',
  failed: 'Failed',
  'odd-word': 'Not completed',
};

function drawHistory(rng: Rng): { runs: ModelRun[]; moments: Moment[] } {
  const runs: ModelRun[] = [];
  const moments: Moment[] = [];
  const records: RunRecordLike[] = [];
  const idle = (n: number): void => {
    for (let k = 0; k < n; k++) moments.push({ run: -1, state: 'Idle', records: [...records] });
  };
  idle(1);
  const count = rng.int(1, 6);
  for (let r = 0; r < count; r++) {
    const protocolId = runs.length > 0 && rng.chance(0.5) ? runs[runs.length - 1].protocolId : rng.int(1, 2);
    const ending = rng.weighted<Ending>({
      completed: 4,
      'aborted-prepared': 2,
      'aborted-running': 1,
      failed: 1,
      'odd-word': 1,
      'instrument-restart': 1,
    });
    const run: ModelRun = { index: r, protocolId, ending };
    const states: RunStateName[] = ['Scheduling', 'Scheduled', 'Loading'];
    if (ending === 'aborted-prepared') states.push('Aborting');
    else {
      states.push('Running');
      if (rng.chance(0.3)) states.push('Pausing', 'Paused', 'Running');
      if (ending === 'failed') states.push('ErrorHandling', 'Aborting');
      else if (ending === 'aborted-running') states.push('Aborting');
      else if (rng.chance(0.2)) states.push('ErrorHandling', 'Running');
      run.start = new Date(T0 + r * 3_600_000 + 60_000).toISOString().replace('.000Z', '');
    }
    for (const state of states) {
      for (let k = rng.int(1, 2); k > 0; k--) moments.push({ run: r, state, records: [...records] });
    }
    if (ending !== 'instrument-restart') {
      run.record = {
        id: `rec-${r}`,
        protocolName: `Protocol ${protocolId}`,
        // a run that never ran: the instrument stamps its record with the abort's time
        startTime: run.start ?? new Date(T0 + r * 3_600_000 + 120_000).toISOString().replace('.000Z', ''),
        runResult: WORD[ending],
      };
      records.unshift(run.record); // newest first, as the instrument lists them
    }
    runs.push(run);
    idle(rng.int(1, 2));
  }
  return { runs, moments };
}

interface Report {
  at: number;
  /** the model runs whose moments the reported tracked run was built from */
  group: number[];
  protocolId: number | null;
  record?: RunRecordLike;
  result: string;
  /** both record lists (first sight, end) were read */
  listsRead: boolean;
}

function statusAt(m: Moment, runs: ModelRun[]): ReturnType<typeof parseRunStatus> {
  const run = m.run >= 0 ? runs[m.run] : undefined;
  const shown = run?.start !== undefined && !['Scheduling', 'Scheduled', 'Loading'].includes(m.state);
  return parseRunStatus({
    protocolRunState: m.state,
    protocolId: run ? run.protocolId : 0,
    protocolName: run ? `Protocol ${run.protocolId}` : '',
    startTime: shown && run?.start ? run.start : NOT_SET,
    estimatedEndTime: NOT_SET,
  });
}

function check(seed: number): void {
  const rng = new Rng(seed);
  const { runs, moments } = drawHistory(rng);
  let memory: RunMemory = newMemory();
  /** tracked run (by firstSeenAt) → the model runs committed polls saw in it */
  const groups = new Map<number, number[]>();
  /** the model runs a committed poll saw, with the restart generation of that sight */
  const seenIn = new Map<number, number>();
  /** the states committed polls saw of each model run, and whether one showed its start time */
  const statesSeen = new Map<number, Set<RunStateName>>();
  const startSeen = new Set<number>();
  const restartAt: number[] = [];
  let generation = 0;
  const reports: Report[] = [];
  const log: string[] = [];
  const where = (): string => `LH_SEED=${seed}; ${log.join(' ')}`;

  moments.forEach((m, i) => {
    const last = i === moments.length - 1;
    if (!last && !rng.chance(0.35)) return; // not polled
    const fate = last ? 'ok' : rng.weighted({ ok: 8, unanswered: 1, redeploy: 1, restart: 1 });
    if (fate === 'unanswered') return void log.push(`${i}:x`);
    if (fate === 'restart') {
      memory = newMemory();
      generation++;
      restartAt.push(i);
      log.push(`${i}:restart`);
    }
    const now = T0 + i * 1000;
    const draft = draftMemory(memory);
    const seen = observe(draft, statusAt(m, runs), now);
    let report: Report | undefined;
    if (seen.finished) {
      const listed = rng.chance(0.85);
      const record = listed ? matchRecord(m.records, seen.finished.run) : undefined;
      const { result } = resultOf(record, seen.finished.run.states);
      report = {
        at: i,
        group: groups.get(seen.finished.run.firstSeenAt) ?? [],
        protocolId: seen.finished.run.protocolId,
        record,
        result,
        listsRead: listed && Array.isArray(seen.finished.run.priorRecordIds),
      };
    }
    if (fate === 'redeploy') return void log.push(`${i}:lost(${m.run}:${m.state})`);
    commitMemory(memory, draft);
    log.push(`${i}:${m.run}:${m.state}${report ? `=>fin[${report.group.join(',')}]` : ''}`);
    if (report) reports.push(report);
    if (memory.run) {
      const g = groups.get(memory.run.firstSeenAt) ?? [];
      if (m.run >= 0 && !g.includes(m.run)) g.push(m.run);
      groups.set(memory.run.firstSeenAt, g);
      if (m.run >= 0) seenIn.set(m.run, generation);
      if (m.run >= 0) statesSeen.set(m.run, (statesSeen.get(m.run) ?? new Set()).add(m.state));
      if (m.run >= 0 && statusAt(m, runs).startTime !== null) startSeen.add(m.run);
      if (memory.run.priorRecordIds === undefined)
        memory.run.priorRecordIds = rng.chance(0.85) ? m.records.map((r) => r.id) : null;
    }
  });

  const reported = new Map<number, Report>();
  for (const rep of reports) {
    assert.ok(rep.group.length > 0, `a finished report of no run seen — ${where()}`);
    for (const r of rep.group) {
      // only once it has ended: the moment of the report is past the run (another run, or Idle after it)
      assert.ok(moments[rep.at].run !== r, `run ${r} reported finished while it goes on — ${where()}`);
      assert.ok(!reported.has(r), `run ${r} reported twice — ${where()}`);
      reported.set(r, rep);
      assert.equal(rep.protocolId, runs[r].protocolId, `run ${r} reported under another protocol — ${where()}`);
    }
    // merged only where nothing seen tells them apart: the same protocol, the earlier ones never seen past Loading
    // (a run seen running, or with its start time, then a run seen being prepared without one; a run seen aborting
    // without a start time, then one with a start time; a start time seen in each: told apart)
    const preparing: RunStateName[] = ['Scheduling', 'Scheduled', 'Loading'];
    rep.group.slice(1).forEach((later, k) => {
      const earlier = rep.group[k];
      const was = [...(statesSeen.get(earlier) ?? [])];
      const is = [...(statesSeen.get(later) ?? [])];
      const ran = startSeen.has(earlier) || was.some((st) => !preparing.includes(st) && st !== 'ErrorHandling');
      const told =
        (ran && is.some((st) => preparing.includes(st))) ||
        (was.includes('Aborting') && !startSeen.has(earlier) && startSeen.has(later)) ||
        (startSeen.has(earlier) && startSeen.has(later));
      assert.ok(!told, `run ${earlier} (seen ${was}) merged with run ${later} (seen ${is}) — ${where()}`);
    });
    if (rep.record) {
      const owner = runs.find((r) => r.record === rep.record);
      // (a run that left no record, the next run come and gone between two polls: its record is the only new one,
      // and nothing tells it from the run's own)
      // (nor, in merged runs, from a run missed between them)
      const ownless = rep.group.every((r) => runs[r].record === undefined);
      const [first, last] = [rep.group[0], rep.group[rep.group.length - 1]];
      assert.ok(
        owner &&
          (rep.group.includes(owner.index) || (owner.index > first && owner.index < last) || (ownless && owner.index > last)),
        `a report of runs ${rep.group} with run ${owner?.index}'s record — ${where()}`,
      );
      assert.equal(rep.result, mapRunResult(rep.record.runResult).result, where());
    } else {
      assert.notEqual(rep.result, 'completed', `completed without a record — ${where()}`);
    }
    const lastRun = runs[rep.group[rep.group.length - 1]];
    if (rep.listsRead && rep.group.length === 1 && lastRun.record) {
      assert.equal(rep.record, lastRun.record, `run ${lastRun.index} reported without its listed record — ${where()}`);
    }
  }
  // every run a committed poll saw is reported by the last (Idle) poll, unless it ended during a restart of Node-RED
  for (const [r, gen] of seenIn) {
    if (reported.has(r)) continue;
    const endedInRestart = gen < generation;
    assert.ok(endedInRestart, `run ${r}, seen, never reported finished — ${where()}`);
  }
}

describe('lh-run-watch decisions over drawn run histories (review, model-based)', function () {
  it(`each run seen is reported finished once, after it ended, with its own record (seed ${SEED}, ${CASES} cases)`, function () {
    for (let k = 0; k < CASES; k++) check((SEED + k) % 2_147_483_647);
  });
});
