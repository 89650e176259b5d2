/**
 * Review finding (review61; a policy's pending default, Redis restored from an older snapshot): the holder writes
 * each default it schedules to the shared schedule and takes it from there when its timer fires. Redis restarted on
 * a snapshot taken before the default was scheduled (the lease, older, still this replica's) lost the schedule and
 * nothing else that the holder could see: its timer, firing before the round that tells the loss, found nothing to
 * take and dropped the default, which then went out from no replica (review54 covered a timer firing after that
 * round). The holder now asks whether Redis lost data since its last round (another run id, a write sequence gone
 * back): then the default waits for that round, which tells the loss, and goes out from the holder.
 * Real Redis restarted on an older dump, an in-process Coordinator, rounds stepped by hand.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useOlderDumps } from '../support/redis-server';

interface Pending {
  key: string;
  deadline: number;
  answer: string;
}

describeWithRedis('review: a pending policy default after Redis restarted on an older snapshot', function () {
  this.timeout(20000);
  const dumps = useOlderDumps();
  const coordinator = useCoordinators(dumps);

  it('falling due before the round that tells the restore, it waits for that round, then goes out from the holder', async function () {
    const c = coordinator('a', `lh-review-default-restored-${process.pid}`);
    c.join('inst');
    await c.round();
    assert.ok(c.held().includes('inst'), 'it holds the instrument');
    const old = await dumps.snapshot(); // the lease is in it, the default not yet

    const defaults = c.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await defaults.add(p);
    await dumps.restartFrom(old);

    assert.equal(await defaults.take('e1', p), 'later', 'not dropped: the schedule went with the restore');
    await c.round(); // tells the loss (another run id); the lease came back with the snapshot
    assert.ok(c.held().includes('inst'), 'it still holds the instrument');
    assert.equal(await defaults.take('e1', p), 'send', 'its default goes out from this replica');
  });
});
