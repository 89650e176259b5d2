/**
 * A run start's wait for Loading/Running (src/nodes/lh-run/start-run.ts) against the wall clock set back while it
 * polls (an NTP step, a VM resumed): it must fail by its timeout, not poll for the step's length before saying the
 * run did not start.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError } from '../../src/client';
import { startRun } from '../../src/nodes/lh-run/start-run';
import { runControl, runStatus, startOptions } from '../unit/start-run.support';

describe('review: a run start timeout after the wall clock steps back', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  for (const back of [60_000, 3_600_000, 3 * 86_400_000]) {
    it(`fails within two timeouts when the clock went back ${back / 60_000} min during the wait`, async function () {
      clock = FakeTimers.install({ toFake: ['Date'] });
      let reads = 0;
      const api = runControl({
        // the create is answered, and the instrument stays Idle: the start waits for its run until the timeout
        status: async () => {
          reads++;
          if (reads === 3) clock?.setSystemTime(Date.now() - back);
          return runStatus('Idle');
        },
      });
      const o = startOptions({ protocol: { id: 1 }, timeoutMs: 10_000, pollMs: 1000, sleep: async (ms) => void clock?.tick(ms) });
      const err = await startRun(api, o).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof LhError, `failed: ${String(err)}`);
      assert.match(err.message, /did not reach|did not start|no answer|still be creating/);
      assert.ok(reads <= 2 * 10 + 5, `${reads} status reads: it polled for the step's length`);
    });
  }
});
