/**
 * Review finding (review90, on fix86 item 7): lh-run-watch's choice of a finished run's record (matchRecord), as a
 * seeded property over drawn run/record histories: runs of one protocol starting 2–60 s apart, each record's start
 * off its run's by the instrument's rounding (under 1 s either way), the watch's first sight of the run A while it
 * runs or in its last moments (ended before the list was read: the list unsure), or with that list unreadable, and
 * later runs that started and ended before the watch saw A finished (a slow poll, a short or aborted run).
 * Promise (lh-run-watch's help): A gets its own record or none, never an older run's nor a later run's.
 *
 * Found: a later run started within 5 s of A's start (A aborted at once, started again) had its record taken for A's:
 * the first record in the list (newest first) within 5 s after A's start won over A's own. And with the list unsure
 * (A's own record among those listed), a later run's record, the only new one, was taken as "the oldest new".
 */
import assert from 'node:assert/strict';

import { matchRecord, type RunRecordLike, type TrackedRun } from '../../src/nodes/runs/run-decisions';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;
const T0 = Date.parse('2026-11-30T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

type Sight = 'running' | 'last-moments' | 'list-unreadable';

describe(`review: a finished run's record is its own, never another run's (seed ${SEED}, ${CASES} cases)`, function () {
  it("a run aborted at once and started again 3 s later: the first run's record is its own", function () {
    const records = [
      { id: 'second', protocolName: 'Serial dilution', startTime: iso(T0 + 3000), runResult: 'Completed' },
      { id: 'first', protocolName: 'Serial dilution', startTime: iso(T0 + 200), runResult: 'Aborted' },
    ];
    const run: TrackedRun = {
      ...{ protocolId: 7, protocolName: 'Serial dilution', startTime: iso(T0), firstSeenAt: T0 + 500 },
      ...{ states: ['Running', 'Aborting'], priorRecordIds: [] },
    };
    assert.equal(matchRecord(records, run)?.id, 'first');
    assert.equal(matchRecord(records, { ...run, priorRecordIds: null })?.id, 'first', 'the list unreadable at first');
  });

  it('over drawn histories, clock rounding and first sights', function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      // earlier runs, A (index `a`), later runs; starts 2–60 s apart (the instrument's clock)
      const before = rng.int(0, 3);
      const after = rng.int(0, 3);
      const starts: number[] = [];
      let t = T0;
      for (let i = 0; i < before + 1 + after; i++) starts.push((t += rng.int(2000, 60_000)));
      const a = before;
      const records: RunRecordLike[] = starts.map((s, i) => ({
        id: `run-${c}-${i}`,
        protocolName: 'Serial dilution',
        startTime: iso(s + rng.int(-999, 999)),
        runResult: 'Completed',
      }));
      const newestFirst = (rs: RunRecordLike[]): RunRecordLike[] => [...rs].reverse();
      const sight = (['running', 'last-moments', 'list-unreadable'] as const)[rng.below(3)] as Sight;
      // at first sight: the earlier runs' records, and A's too when A had ended (last moments)
      const prior = records.slice(0, sight === 'last-moments' ? a + 1 : a).map((r) => r.id);
      const run: TrackedRun = {
        protocolId: 7,
        protocolName: 'Serial dilution',
        startTime: iso(starts[a]),
        firstSeenAt: starts[a] + 1000,
        states: sight === 'running' ? ['Running'] : ['Aborting'],
        priorRecordIds: sight === 'list-unreadable' ? null : prior,
        ...(sight === 'last-moments' ? { priorRecordsUnsure: true } : {}),
      };
      // at the finish: A's record and those of the later runs that ended by then
      const ended = rng.int(0, after);
      const listed = newestFirst(records.slice(0, a + 1 + ended));
      const got = matchRecord(listed, run);
      const at = `seed ${SEED} case ${c} (${sight}; starts ${starts.map((s) => (s - T0) / 1000).join(', ')}; A #${a})`;
      assert.equal(got?.id, records[a].id, `${at}: got ${JSON.stringify(got)}`);
    }
  });
});
