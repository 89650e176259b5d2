/**
 * Issue 31: the polls in flight in one Node-RED are capped, and a burst waits for permits in order of arrival,
 * without a fixed wait (a permit goes to the next one the moment one is released).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { PollLoop } from '../../src/nodes/shared/poll-loop';
import { PollPermits, Release } from '../../src/nodes/shared/poll-permits';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('poll permits', function () {
  it('never more than the cap out, served in order of arrival, a released permit passed on at once (any order of releases)', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 120 }), // true: one more asks; false: the oldest out releases
        async (max, steps) => {
          const permits = new PollPermits(max);
          const granted: number[] = [];
          const out: { id: number; release: Release }[] = [];
          let asked = 0;
          for (const ask of steps) {
            if (ask) {
              const id = asked++;
              void permits.acquire().then((release) => {
                granted.push(id);
                out.push({ id, release });
              });
            } else {
              const first = out.shift();
              first?.release();
              first?.release(); // twice: frees nothing more
            }
            await flush();
            assert.ok(permits.inFlight <= max, `${permits.inFlight} out, cap ${max}`);
            assert.equal(out.length, permits.inFlight);
            // without a fixed wait: a permit is free only when nobody waits
            assert.ok(permits.waiting === 0 || permits.inFlight === max);
          }
          assert.deepEqual(
            granted,
            granted.map((_, i) => i),
            'in order of arrival',
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('tryAcquire: a permit only when one is free and nobody waits (it never jumps the queue), passed on when released', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom('ask', 'try', 'release'), { minLength: 1, maxLength: 80 }),
        async (max, steps) => {
          const permits = new PollPermits(max);
          const out: Release[] = [];
          for (const step of steps) {
            if (step === 'ask') void permits.acquire().then((release) => out.push(release));
            else if (step === 'release') out.shift()?.();
            else {
              const free = permits.inFlight < max && permits.waiting === 0;
              assert.equal(permits.busy, !free, 'busy: every permit out or a poll waiting');
              const release = permits.tryAcquire();
              assert.equal(release !== undefined, free, `tryAcquire with ${permits.inFlight} out, ${permits.waiting} waiting`);
              if (release) out.push(release);
            }
            await flush();
            assert.ok(permits.inFlight <= max);
            assert.ok(permits.waiting === 0 || permits.inFlight === max, 'nobody waits while a permit is free');
          }
          while (out.length > 0) {
            out.shift()?.();
            await flush();
          }
          assert.equal(permits.inFlight, 0);
          assert.equal(permits.waiting, 0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a poll loop waits for a permit; a push meanwhile folds into the poll that is waiting', async function () {
    const clock = FakeTimers.install({
      now: 0,
      toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
    });
    try {
      const permits = new PollPermits(1);
      const starts: string[] = [];
      const loop = (name: string): PollLoop =>
        new PollLoop(async () => {
          starts.push(`${name}@${Date.now()}`);
          await new Promise((r) => setTimeout(r, 10));
          return 3_600_000;
        }, permits);
      const a = loop('a');
      const b = loop('b');
      a.trigger();
      b.trigger();
      await clock.tickAsync(1);
      assert.equal(b.pollPending, true, 'b waits for the permit: its poll has not started');
      b.trigger(); // a push for b while it waits: the waiting poll serves it
      await clock.tickAsync(100);
      assert.deepEqual(starts, ['a@0', 'b@10']);
      a.stop();
      b.stop();
    } finally {
      clock.uninstall();
    }
  });
});
