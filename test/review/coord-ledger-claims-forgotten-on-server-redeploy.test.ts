/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): each replica keeps its own answer claims to
 * write them back after a loss, but kept them on the instrument's coordination, which goes when the last lh-server
 * node of the instrument leaves: a deploy of modified nodes that touches the lh-server (its name, its timeout) while
 * an answer is in flight, or any time before a loss, made the replica forget every claim it had. After the next loss
 * nothing of it went back, and an automatic answer of another replica to an error it had answered (or was answering)
 * went out again. The claims are kept by the coordination node (the Coordinator), per instrument, across such
 * redeploys. Real Redis; the rounds are stepped by hand.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis("review: a replica's answer claims across a redeploy of its lh-server", function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);

  it('are still written back after a loss: the answer in flight refuses a second one', async function () {
    const prefix = `lh-review-claims-redeploy-${process.pid}`;
    const a = coordinator('a', prefix);
    const ia = a.join('inst');
    await a.round();
    const b = coordinator('b', prefix);
    b.join('inst');
    await b.round();
    const sent = await a.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Retry', { by: 'operator' });
    assert.ok(sent.ok, "a person's answer on a is in flight (a slow instrument)");
    // the lh-server node is redeployed (modified nodes): it leaves and joins again
    await a.leave('inst');
    a.join('inst');
    await db.redis.flushall();
    await a.round(); // a learns of the loss and writes its claims back
    const other = await b.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Abort', { by: 'operator' });
    assert.equal(other.ok, false, 'the answer a has in flight refuses a second one');
    await sent.release();
  });
});
