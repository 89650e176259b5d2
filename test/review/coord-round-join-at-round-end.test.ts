/**
 * Review finding (a join's round): join() asks for a round at once (a timer at 0 ms), but a round in flight schedules
 * the next one a round later when it ends, and that cleared the join's timer when it had not fired yet (the join came
 * during the round's last Redis call): the new instrument stayed `joining`, watched by no replica, for a third of the
 * lease more. A round's end now keeps a round asked for meanwhile. Real Redis; the timers run on a fake clock.
 */
import assert from 'assert';

import { useFakeTimeouts } from '../support/fake-timeouts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

/**
 * Lets real I/O and the microtasks after it run (the fake clock fakes timers only) until `done`, for at most 10 s of
 * real time (a count of turns ran out before Redis answered on a busy machine).
 */
async function until(done: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!done() && Date.now() < end) await new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describeWithRedis("review: a join's round while a round runs", function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();

  it('an instrument joined during the last Redis call of a round has its round at once, not a round later', async function () {
    const clock = fakeTimeouts();
    const c = coordinator('a', `lh-review-round-join-${process.pid}`);
    const one = c.join('one');
    let heartbeats = 0;
    const heartbeat = c.leases.heartbeat.bind(c.leases);
    c.leases.heartbeat = (...args) => (heartbeats++, heartbeat(...args));
    const acquire = c.leases.acquire.bind(c.leases);
    let two: ReturnType<typeof c.join> | undefined;
    c.leases.acquire = (...args) => {
      const taking = acquire(...args);
      two ??= c.join('two'); // an lh-server node of another instrument is deployed meanwhile
      return taking;
    };
    await clock.tickAsync(0); // the first join's round starts
    // ...and ends (holder is said before its last calls: on a busy machine they take more turns)
    const running = (): boolean => (c as unknown as { running?: Promise<void> }).running !== undefined;
    await until(() => one.isHolder && !running());
    assert.equal(heartbeats, 1);
    assert.equal(two?.state.role, 'joining', 'the round took the lease of the instrument it started with');
    await clock.tickAsync(1);
    // no fake time passes from here: a round put off by a round (the fake clock's 20 s) never comes
    await until(() => heartbeats === 2);
    assert.equal(heartbeats, 2, "the join's round started at once");
    await until(() => two?.state.role !== 'joining');
    assert.equal(two?.state.role, 'holder');
  });
});
