/**
 * lh-run-watch's progress msgs (output 3, at most once per progress interval: run-decisions.ts `progressDue`, fed
 * Date.now() at each poll) against the wall clock stepping while a run goes on: drawn clock histories of polls, steps
 * back and forward (minutes to days) and a clock jittering back 1 ms per reading. A step back must not hold progress
 * for the step's length (a run of hours would say nothing until it ended); jitter must not report on every poll.
 * LH_SEED / LH_CASES replay or extend the drawn histories.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { newMemory, progressDue } from '../../src/nodes/runs/run-decisions';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('review: run-watch progress after the wall clock steps', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`reports progress within two intervals of elapsed time whatever the clock did, and jitter never floods (seed ${SEED}, ${CASES} cases)`, function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      clock?.uninstall();
      clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-24T10:00:00.000Z') + rng.below(DAY) });
      const everyMs = rng.pick([0, 1000, 5000, 30_000, 5 * MIN]);
      const pollMs = rng.pick([500, 1000, 2000, 10_000]);
      const memory = newMemory();
      let elapsed = 0;
      let lastReport: number | undefined;
      /** the last report, or the last step back since (a step counts the wait afresh) */
      let since: number | undefined;
      let forward = false;
      let jitters = 0;
      const trace: string[] = [];
      for (let i = 0; i < 400; i++) {
        const what = rng.weighted({ poll: 20, back: 1, forward: 1, jitter: 6 });
        if (what === 'poll') {
          clock.tick(pollMs);
          elapsed += pollMs;
          const due = progressDue(memory, Date.now(), everyMs);
          const gap = lastReport === undefined ? undefined : elapsed - lastReport;
          const where = `seed ${SEED} case ${c} (every ${everyMs} ms, poll ${pollMs} ms): ${trace.slice(-6).join(', ')}`;
          // a step back holds the next report by at most an interval after it (a step shorter than that: by the step),
          // never by a longer step's length; jitter by its milliseconds
          if (since !== undefined)
            assert.ok(
              due || elapsed - since < 2 * everyMs + 2 * pollMs + jitters,
              `no progress for ${gap} ms of a run; ${where}`,
            );
          // without a step forward, reports are an interval apart by elapsed time (jitter: less 1 ms a reading)
          if (due && gap !== undefined && !forward)
            assert.ok(gap >= everyMs - jitters, `progress again after ${gap} ms; ${where}`);
          if (due) {
            lastReport = since = elapsed;
            forward = false;
            jitters = 0;
          }
          trace.push(due ? 'poll: report' : 'poll');
        } else {
          const by =
            what === 'jitter' ? -1 : (what === 'back' ? -1 : 1) * rng.pick([MIN, 10 * MIN, HOUR, 6 * HOUR, DAY, 3 * DAY]);
          if (what === 'forward') forward = true;
          if (what === 'jitter') jitters++;
          if (what === 'back' && since !== undefined) since = elapsed;
          clock.setSystemTime(Date.now() + by);
          trace.push(`${what} ${by} ms`);
        }
      }
    }
  });
});
