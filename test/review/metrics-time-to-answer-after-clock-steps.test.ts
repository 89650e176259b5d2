/**
 * The metric "time from raised to answered" (`lh_error_time_to_answer_seconds`) against the wall clock stepping
 * between the raise and the answer (an NTP step, a VM resumed): it took two Date.now() readings, so a step forward of
 * a day added a day to it, and a step back made it 0. Drawn clock histories (steps back and forward of minutes to
 * days, 1 ms jitter, waits) on the metrics as the node layer makes them: the sum observed is the time elapsed.
 * LH_SEED / LH_CASES replay or extend them.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { instrumentIdentity } from '../../src/coordination/instrument-identity';
import { LabMetrics } from '../../src/observe/metrics';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 30;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('review: time to answer after the wall clock steps', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`observes the time elapsed from raise to answer, whatever the clock did (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      clock?.uninstall();
      clock = FakeTimers.install({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-24T10:00:00.000Z') });
      const metrics = new LabMetrics(Date.now, instrumentIdentity); // as metrics-route.ts makes it
      try {
        const about = { instrumentKey: 'k', instrument: 'Bench' };
        const error = { source: 'A' as const, id: `e${c}`, title: 'Clot', severity: 'Error' };
        metrics.observe({ ...about, kind: 'raised', error, raisedAt: Date.now() });
        let elapsed = 0;
        const trace: string[] = [];
        for (let i = rng.int(1, 6); i > 0; i--) {
          const what = rng.weighted({ wait: 3, back: 1, forward: 1, jitter: 2 });
          if (what === 'wait') {
            const ms = rng.int(0, 10 * MIN);
            clock.tick(ms);
            elapsed += ms;
            trace.push(`wait ${ms}`);
          } else {
            const by = what === 'jitter' ? -1 : (what === 'back' ? -1 : 1) * rng.pick([MIN, HOUR, DAY, 3 * DAY]);
            clock.setSystemTime(Date.now() + by);
            trace.push(`${what} ${by}`);
          }
        }
        metrics.observe({ ...about, kind: 'answered', source: 'A', id: error.id, by: 'page' });
        const body = (await metrics.render()).body;
        const sum = Number(/lh_error_time_to_answer_seconds_sum\{source="A"\} ([\d.e+-]+)/.exec(body)?.[1]);
        assert.ok(
          Math.abs(sum - elapsed / 1000) < 0.001,
          `seed ${SEED} case ${c} (${trace.join(', ')}): observed ${sum} s, elapsed ${elapsed / 1000} s`,
        );
      } finally {
        metrics.close();
      }
    }
  });
});
