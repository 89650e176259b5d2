/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): a replica writes its own claims back (up to
 * 1,000 per instrument and source) in the round in which it learns of the loss, before it renews or takes any lease,
 * and it wrote them one at a time, waiting for each reply. With each call 1 ms away, 10 instruments' claims held
 * that round for 18 s (1.1 s once sent at once): after a FLUSHALL (every lease gone) no replica took any lease for
 * that long (no error raised, nothing watched), beyond "held within two lease times" (default lease 5 s), and a
 * holder whose lease came back with a snapshot let it expire. The write-back of one ledger must be sent at once (one
 * round trip), not claim by claim. Real Redis; the round trips are counted at the client (no clock).
 */
import assert from 'assert';

import { CoordinationKeys } from '../../src/coordination/keys';
import { LEDGER_WRITE_BACK } from '../../src/coordination/scripts';
import { SharedLedger, type StoreRedis } from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis("review: the write-back of a replica's answer claims after a loss", function () {
  const db = useRedis();

  it('sends the claims of one ledger in one round trip, and every one goes back', async function () {
    const keys = new CoordinationKeys(`lh-review-write-back-trips-${process.pid}`).instrument('inst');
    let inFlight = 0;
    let trips = 0;
    const redis = new Proxy(db.redis, {
      get(target, prop, receiver) {
        if (prop !== 'eval') return Reflect.get(target, prop, receiver) as unknown;
        return async (script: string, numKeys: number, ...args: (string | number)[]) => {
          if (script !== LEDGER_WRITE_BACK) return target.eval(script, numKeys, ...args);
          // a call sent while none is waiting for its reply starts a new round trip
          if (inFlight++ === 0) trips++;
          try {
            return await target.eval(script, numKeys, ...args);
          } finally {
            inFlight--;
          }
        };
      },
    }) as unknown as StoreRedis;
    const ledger = new SharedLedger(redis, keys, 'A', 'a');
    const claims = 300;
    for (let i = 0; i < claims; i++) {
      const c = await ledger.claim(`e${i}`, 'Retry', { by: 'operator' });
      if (c.ok && i % 2 === 0) await c.confirm();
    }
    await db.redis.del(keys.ledger('A'), `${keys.ledger('A')}:order`); // Redis lost its data
    trips = 0;
    assert.strictEqual(await ledger.reseed(), claims, 'every claim went back');
    assert.strictEqual(trips, 1, `the write-back took ${trips} round trips`);
    assert.strictEqual(await db.redis.hlen(keys.ledger('A')), claims);
  });
});
