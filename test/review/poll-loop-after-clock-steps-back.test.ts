/**
 * The poll loop every poll node runs (src/nodes/shared/poll-loop.ts) against the wall clock set back or jittering
 * back at drawn moments (between polls, during one): the next poll comes after the poll's delay, never after the
 * step's length (an error poll silent for an hour hears no instrument error for the hour).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { PollLoop } from '../../src/nodes/shared/poll-loop';
import { Rng } from '../support/prng';

const SEED = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const CASES = Number(process.env.LH_CASES ?? 10);

describe('review: the poll loop after the wall clock steps back', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`polls every interval whatever the wall clock does (seed ${SEED})`, async function () {
    for (let c = 0; c < CASES; c++) {
      const rng = new Rng(SEED + c);
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
      const c0 = clock;
      const interval = rng.int(100, 5_000);
      const polls: number[] = []; // timer time (monotonic) of each poll
      let mono = 0;
      const steps: string[] = [];
      const step = (): void => {
        const draw = rng.next();
        const by = draw < 0.2 ? -rng.pick([60_000, 3_600_000, 86_400_000]) : draw < 0.4 ? -1 : 0;
        if (by !== 0) {
          c0.setSystemTime(Date.now() + by);
          steps.push(String(by));
        }
      };
      const loop = new PollLoop(async () => {
        polls.push(mono);
        step(); // during the poll
        return interval;
      });
      loop.start();
      for (let t = 0; t < 20 * interval; t += 50) {
        await c0.tickAsync(50);
        mono += 50;
        if (rng.chance(0.05)) step(); // between polls
      }
      loop.stop();
      c0.uninstall();
      clock = undefined;
      for (let i = 1; i < polls.length; i++) {
        const gap = polls[i] - polls[i - 1];
        assert.ok(
          gap <= interval + 50,
          `case ${c}: ${gap} ms between two polls of a ${interval} ms loop (steps ${steps.join(' ')})`,
        );
      }
      assert.ok(polls.length >= 15, `case ${c}: ${polls.length} polls in 20 intervals (steps ${steps.join(' ')})`);
    }
  });
});
