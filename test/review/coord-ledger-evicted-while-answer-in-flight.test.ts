/**
 * Review finding (the answer ledger on a Redis that evicts keys): `volatile-lru`, the default policy of some managed
 * Redis services, evicts keys that have an expiry once Redis is full: the answer ledgers have one (30 days), and a
 * ledger is used only when an error is answered, so it is among the first to go. Nothing told the replicas (the
 * epoch, the fence counter and the server's run id were all still there): an answer one replica had in flight was no
 * longer in the ledger, and a person's answer to the same error on another replica's page was claimed and sent too.
 * An eviction is now told as a loss of data (the run id read with Redis's `evicted_keys`): the replicas write their
 * own claims back and answers wait two rounds, so the answer in flight refuses the second.
 * Real Redis, real eviction (`CONFIG SET maxmemory`, volatile-lru); the rounds stepped by hand, the hold on a fake clock.
 */
import assert from 'assert';

import { CoordinationKeys } from '../../src/coordination/keys';
import { useFakeTimeouts } from '../support/fake-timeouts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function infoField(info: string, name: string): number {
  const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : NaN;
}

describeWithRedis('review: the answer ledger evicted (volatile-lru) while an answer is in flight', function () {
  this.timeout(60000);
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();
  afterEach(async function () {
    await db.redis.config('SET', 'maxmemory', '0').catch(() => undefined);
    await db.redis.config('SET', 'maxmemory-policy', 'noeviction').catch(() => undefined);
  });

  /**
   * Redis at its `maxmemory` (volatile-lru) evicts keys with an expiry, least recently used first, until `victims`
   * are gone: they were used first, then other data with an expiry (a cache beside the group), then the group's keys
   * (its rounds use them). `tellers` (keys by which a replica tells a loss by itself) must have survived.
   */
  async function evict(prefix: string, victims: readonly string[], tellers: readonly string[]): Promise<void> {
    const others = (await db.redis.keys(`${prefix}:*`)).filter((k) => !victims.includes(k));
    await sleep(1100); // Redis's LRU clock counts seconds
    const junk = Array.from({ length: 300 }, (_, i) => `${prefix}-cache:${i}`);
    for (const k of junk) await db.redis.set(k, 'x'.repeat(256), 'PX', 3600_000);
    await sleep(1100);
    if (others.length > 0) await db.redis.touch(...others);
    await db.redis.config('SET', 'maxmemory-policy', 'volatile-lru');
    await db.redis.config('SET', 'maxmemory-samples', '64');
    let limit = infoField(await db.redis.info('memory'), 'used_memory');
    const present = async (): Promise<number> => db.redis.exists(...victims);
    for (let i = 0; i < 200 && (await present()) > 0; i++) {
      limit -= 512;
      await db.redis.config('SET', 'maxmemory', String(limit));
      await db.redis.set(`${prefix}-cache:${i}`, 'x'.repeat(256), 'PX', 3600_000); // a write: Redis evicts before it
    }
    await db.redis.config('SET', 'maxmemory', '0');
    await db.redis.config('SET', 'maxmemory-policy', 'noeviction');
    await db.redis.del(...junk);
    assert.equal(await present(), 0, 'the ledger was evicted');
    const gone: string[] = [];
    for (const k of tellers) if ((await db.redis.exists(k)) === 0) gone.push(k);
    assert.deepEqual(gone, [], 'the keys that tell a loss by themselves are all there');
    assert.ok(infoField(await db.redis.info('stats'), 'evicted_keys') > 0, 'Redis counted the eviction');
  }

  it("a person's answer on another replica waits, and the answer in flight refuses it", async function () {
    if (db.harness.external) this.skip(); // CONFIG SET on a Redis of the test's own only
    const prefix = `lh-review-ledger-evict-${process.pid}`;
    const holder = coordinator('a', prefix);
    const ih = holder.join('inst');
    await holder.round();
    const other = coordinator('b', prefix);
    const io = other.join('inst');
    await other.round();
    await holder.round();
    assert.equal(ih.state.role, 'holder');
    assert.equal(io.state.role, 'standby');

    // the holder's automatic answer to e1 is in flight (a slow instrument)
    const sent = await holder.answerClaims(ih.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
    assert.ok(sent.ok);

    const k = new CoordinationKeys(prefix);
    const ki = k.instrument('inst');
    await evict(prefix, [ki.ledger('A'), `${ki.ledger('A')}:order`], [k.epoch, ki.lease, ki.fence]);

    const clock = fakeTimeouts();
    await other.round(); // its next round, as ever
    let settled = false;
    // a person answers e1 on the other replica's page (no lease needed)
    const second = other.answerClaims(io.instrumentKey).claim('A', 'e1', 'Abort', { by: 'ana' });
    void second.finally(() => (settled = true));
    await clock.tickAsync(1000);
    await holder.round(); // the holder's next round
    await clock.tickAsync(2 * other.roundMs);
    const claim = await second;
    assert.ok(settled);
    assert.equal(claim.ok, false, 'refused: the holder has its answer to e1 in flight');
    if (!claim.ok) assert.deepEqual([claim.existing.replica, claim.existing.outcome], ['a', 'in-flight']);
    await sent.release();
  });
});
