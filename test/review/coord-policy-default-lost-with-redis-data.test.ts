/**
 * Review finding (a policy's pending default when Redis loses its data): the holder writes each default it schedules
 * to the shared schedule, and its timer takes it from there (once, fenced) before sending. After a FLUSHALL (or a
 * restart without persistence, or the schedule evicted) the schedule was gone: the holder's own timer found nothing
 * to take and dropped the default, which then went out from no replica. A walk-away or semi-automatic error waited
 * for a person instead. The holder that scheduled it, holding the instrument under the lease that recovers from the
 * loss, now sends it (the answer ledger written back after the loss still refuses it where another replica answered).
 * Real Redis, in-process Coordinators, rounds stepped by hand.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

interface Pending {
  key: string;
  deadline: number;
  answer: string;
}

describeWithRedis('review: a pending policy default when Redis loses its data', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  let n = 0;

  async function holder(): Promise<Coordinator> {
    const c = coordinator('a', `lh-review-default-loss-${process.pid}-${++n}`);
    c.join('inst');
    await c.round();
    assert.ok(c.held().includes('inst'), 'it holds the instrument');
    return c;
  }

  it('the holder that scheduled it sends it when it falls due after a FLUSHALL', async function () {
    const c = await holder();
    const defaults = c.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now() + 60_000, answer: 'Retry' };
    await defaults.add(p);

    await db.redis.flushall();
    await c.round(); // tells the loss (the group's epoch is gone) and takes the instrument again
    assert.ok(c.held().includes('inst'), 'it holds the instrument again');

    assert.equal(await defaults.take('e1', p), 'send', 'its default goes out from this replica');
  });

  it('falling due after a FLUSHALL and before the round that tells it, it waits for that round, then goes out', async function () {
    // review61: the lease went with the data, so the fenced take was refused while this replica still held the
    // instrument by its own clock, and a refused take dropped the default: the schedule gone, nobody sent it
    const c = await holder();
    const defaults = c.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await defaults.add(p);

    await db.redis.flushall();
    assert.equal(await defaults.take('e1', p), 'later', 'not dropped: this replica still takes itself for the holder');
    await c.round(); // tells the loss and takes the instrument again
    assert.ok(c.held().includes('inst'), 'it holds the instrument again');
    assert.equal(await defaults.take('e1', p), 'send', 'its default goes out from this replica');
  });

  it('refused by the fence once another replica holds the instrument, it is dropped (that one sends it)', async function () {
    const c = await holder();
    const defaults = c.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await defaults.add(p);
    // another replica holds the lease now (this one's went over to it), and this one's round saw it
    const lease = (await db.redis.keys(`lh-review-default-loss-${process.pid}-${n}*`)).find((k) => k.endsWith(':lease'));
    assert.ok(lease, 'the lease key');
    await db.redis.set(lease, 'b:999');
    await c.round();
    assert.ok(!c.held().includes('inst'), 'a standby now');
    assert.equal(await defaults.take('e1', p), 'drop');
  });

  it('without a loss, a default another replica took is not sent again', async function () {
    const c = await holder();
    const defaults = c.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await defaults.add(p);
    // another instance's sweep took it (as a new holder's would): the schedule no longer has it
    assert.deepEqual(
      (await c.defaults<Pending>('inst', 'policy').due(Date.now())).map((d) => d.key),
      ['e1'],
    );
    await c.round();
    assert.equal(await defaults.take('e1', p), 'drop', 'sent once, by the one that took it');
  });
});
