/**
 * CoordinatedDefaults (a policy node's defaults under coordination), on real Redis with in-process Coordinators: a
 * default only this replica knows (notified while Redis was lost) is never dropped on the way to the replica that
 * holds the instrument, whatever this replica believes about the lease and whether Redis answers the hand-over.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { reachable } from '../support/redis-link';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Pending {
  key: string;
  deadline: number;
  answer: string;
}

describeWithRedis('coordination: a policy default known to one replica only reaches the holder', function () {
  const db = useRedis();
  const coordinators: Coordinator[] = [];
  let prefix: string;
  let n = 0;
  beforeEach(function () {
    prefix = `lh-defaults-${process.pid}-${++n}`;
  });
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close();
  });

  /** A replica that joined; the round join() schedules at once has run (the next is 20 s away): rounds are stepped here. */
  async function replica(name: string, redis: StoreRedis = db.redis): Promise<Coordinator> {
    const c = new Coordinator({ redis, prefix, leaseMs: 60000, replica: name });
    coordinators.push(c);
    c.join('inst');
    await new Promise((r) => setTimeout(r, 50));
    return c;
  }

  it('a holder whose lease was taken meanwhile (it does not know yet) hands its unshared default over instead of dropping it', async function () {
    const old = await replica('z'); // sorts last: the new replica's share
    await old.round();
    assert.ok(old.held().includes('inst'));
    // its lease expired (deleted, as the expiry would) and another replica took the instrument; the old one's next
    // round has not run: it still believes it holds it
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    const next = await replica('b');
    await next.round();
    assert.ok(next.held().includes('inst'));
    assert.ok(old.held().includes('inst'), 'the old holder has not noticed yet');

    const oldDefaults = old.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await oldDefaults.add(p, { lost: true }); // its msg went out while Redis was lost: the fenced schedule is refused
    assert.equal(await oldDefaults.take('e1', p), 'drop', 'the old holder sends nothing');
    assert.deepEqual(
      (await next.defaults<Pending>('inst', 'policy').due(Date.now())).map((d) => d.key),
      ['e1'],
      "the holder's sweep finds it (it was not dropped)",
    );
  });

  it('a default whose answer was fenced goes back to the schedule; when Redis does not take it, it is kept and handed over later', async function () {
    const link = reachable(db.redis);
    const old = await replica('z', link.redis);
    await old.round();
    const oldDefaults = old.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await oldDefaults.add(p);
    assert.equal(await oldDefaults.take('e1', p), 'send');
    // its answer was fenced (another replica holds the instrument now), and Redis blips as it gives the default back
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    const next = await replica('b');
    await next.round();
    link.down = true;
    assert.equal(await oldDefaults.giveBack(p), false, 'Redis did not take it');
    link.down = false;
    // the policy looks again later (its timer): the default is still this replica's to hand over
    assert.equal(await oldDefaults.take('e1', p), 'drop');
    assert.deepEqual(
      (await next.defaults<Pending>('inst', 'policy').due(Date.now())).map((d) => d.key),
      ['e1'],
      "the holder's sweep finds it",
    );
  });

  it('a holder whose lease vanished between raising an error and scheduling its default keeps it and hands it over', async function () {
    const old = await replica('z'); // sorts last: the new replica's share
    await old.round();
    // its gate raised the error as the holder (the shared memory has it raised: no other replica will raise it);
    // before its policy schedules the default, the lease is gone (a Redis restart or failover) and another takes it
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    const next = await replica('b');
    await next.round();
    assert.ok(next.held().includes('inst'));
    const oldDefaults = old.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await oldDefaults.add(p); // fenced: not written
    await old.round(); // it learns it stands by
    assert.equal(await oldDefaults.take('e1', p), 'drop');
    assert.deepEqual(
      (await next.defaults<Pending>('inst', 'policy').due(Date.now())).map((d) => d.key),
      ['e1'],
      "the holder's sweep finds it (it was not dropped)",
    );
  });
});
