/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): the README says a replica tells a loss by
 * the group's epoch, by the fence counter being behind a token it had seen, or by a write sequence going back, and
 * that "the replica that finds it gives the group a new epoch, so every replica knows at its next round"; the
 * replicas then write their own answer claims back, and automatic answers wait two rounds. A restore from an older
 * snapshot that kept the epoch and the write sequence (no error raised or resolved since it) but not the fence
 * counter, the lease, nor a ledger claim made since, is told only by the grant (`grant.dataLost`): the epoch was not
 * renewed, nobody wrote claims back and the new holder's automatic answer was not held. An answer still in flight
 * from the old holder (paused past its lease across the restore, a slow instrument) was then answered again.
 * Real Redis; the restore is done on the keys it changes; the rounds are stepped by hand, the hold on a fake clock.
 */
import assert from 'assert';

import { CoordinationKeys } from '../../src/coordination/keys';
import { useFakeTimeouts } from '../support/fake-timeouts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: a loss told by the fence counter alone brings the answer ledger back', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();

  it("a new holder whose grant found the fence counter behind waits, and the old holder's answer in flight refuses it", async function () {
    const clock = fakeTimeouts();
    const prefix = `lh-review-fence-loss-${process.pid}`;
    // `old` holds the instrument; `next` (first by name: its share is the instrument) stands by
    const old = coordinator('b', prefix);
    const io = old.join('inst');
    await old.round();
    const next = coordinator('a', prefix);
    const inx = next.join('inst');
    await next.round();
    assert.equal(io.state.role, 'holder');
    assert.equal(inx.state.role, 'standby', 'next knows the lease and its token');
    const token = io.state.token ?? 0;

    const sent = await old.answerClaims(io.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
    assert.ok(sent.ok, "old's automatic answer is in flight (a slow instrument); old is then paused past its lease");

    // Redis restarts from a snapshot taken before old's lease and answer: epoch and write sequence as they were
    const k = new CoordinationKeys(prefix).instrument('inst');
    await db.redis.del(k.lease, k.ledger('A'), `${k.ledger('A')}:order`);
    await db.redis.set(k.fence, String(token - 5000));

    await next.round(); // the lease is free: next takes it, its grant finding the fence counter behind the token seen
    assert.equal(inx.state.role, 'holder');
    assert.ok(inx.dataLost, 'next recovers: the grant told the loss');

    let settled = false;
    const second = next.answerClaims(inx.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
    void second.finally(() => (settled = true));
    await clock.tickAsync(1000);
    assert.equal(settled, false, "next's automatic answer waits while the other replicas may not know of the loss yet");
    await old.round(); // old wakes: it must learn of the loss (a new epoch) and write its claim back
    await clock.tickAsync(2 * next.roundMs);
    const claim = await second;
    assert.equal(claim.ok, false, 'refused: old has its answer to e1 in flight');
    if (!claim.ok) assert.deepEqual([claim.existing.replica, claim.existing.outcome], ['b', 'in-flight']);
    await sent.release();
  });
});
