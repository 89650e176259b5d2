/**
 * Review finding (issue 29, the answer ledger after Redis lost its data), not fixed: automatic answers wait two rounds
 * after a loss so that every replica has written its own claims back, but a person's answer is not held (a decision:
 * test/coordination/ledger-after-loss.test.ts "a person answers at once"). A person answering on one replica in the
 * round after the loss, before the replica with an answer in flight learned of the loss and wrote it back, is let
 * through: the error is answered twice (the instrument refuses the second with 409 where it tracks answers). The
 * README's "Beyond it" did not say so; it does now. A fix would hold a person's answer too (up to two rounds, and
 * only on a replica that already knows of the loss), a trade-off for the lead: left as a skipped test.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: a person answers in the round after a loss', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);

  it.skip("is refused while another replica's answer to that error is in flight (not fixed: a person's answer is not held)", async function () {
    const prefix = `lh-review-person-after-loss-${process.pid}`;
    const a = coordinator('a', prefix);
    const ia = a.join('inst');
    await a.round();
    const b = coordinator('b', prefix);
    b.join('inst');
    await b.round();
    const sent = await a.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
    assert.ok(sent.ok, "a's automatic answer is in flight (a slow instrument)");
    await db.redis.flushall();
    await b.round(); // b learns of the loss first; a has not had its round yet
    const person = await b.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Abort', { by: 'operator' });
    assert.equal(person.ok, false, 'the answer a has in flight refuses a second one');
    await sent.release();
  });
});
