/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): automatic answers wait two rounds after a
 * replica learns of a loss, so every live replica has written its own claims back first. The README says "the
 * recovery after Redis lost its data lasts two lease times counted in rounds, not on the replica's clock", but the
 * hold was counted on the replica's wall clock (when it learned the loss, then `now` at each answer): a clock stepped
 * back (an NTP correction, a VM restored) held every automatic answer for as long as the step (an hour: the policy
 * answered nothing for an hour), and a clock stepped forward let automatic answers through at once, before the other
 * replicas wrote their claims back (an answer in flight answered twice). The rounds are stepped by hand, the hold runs
 * on a fake timer clock; the replica's wall clock is the coordinator's `now`.
 */
import assert from 'assert';

import { useFakeTimeouts } from '../support/fake-timeouts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis("review: the answers' hold after a loss is not on the replica's clock", function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();
  let n = 0;

  for (const step of [-3_600_000, 3_600_000]) {
    const back = step < 0;
    it(`the wall clock stepped ${back ? 'back' : 'forward'} an hour after the loss: automatic answers wait two rounds, no ${back ? 'more' : 'less'}`, async function () {
      const clock = fakeTimeouts();
      let offset = 0;
      const a = coordinator('a', `lh-review-hold-clock-${process.pid}-${++n}`, { now: () => Date.now() + offset });
      const ia = a.join('inst');
      await a.round();
      assert.equal(ia.state.role, 'holder');
      await db.redis.flushall();
      await a.round(); // a learns of the loss
      offset = step;
      let settled = false;
      const claim = a.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
      void claim.finally(() => (settled = true)).catch(() => undefined);
      await clock.tickAsync(1000);
      assert.equal(settled, false, 'held while the other replicas may not know of the loss yet');
      await clock.tickAsync(2 * a.roundMs);
      // past the hold the claim goes to Redis (real I/O, however long a busy machine takes): a hold longer than two
      // rounds would wait on the fake clock, which nothing ticks any more, and the test would time out. The answer is
      // claimed, or fenced when the step forward outran the lease (its next renewal)
      const made = await claim.catch((err: Error) => assert.match(err.message, /no longer holds the instrument's lease/));
      if (made?.ok) await made.release();
    });
  }
});
