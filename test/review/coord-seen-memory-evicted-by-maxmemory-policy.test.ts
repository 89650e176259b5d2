/**
 * Review finding (coordination when Redis evicts keys): a Redis with `maxmemory` and an evicting policy
 * (`allkeys-lru`, the usual cache set-up, or a managed Redis's default) drops the least recently used keys when it is
 * full. The shared memory of raised errors is written once per error and then only read at a takeover: it is the
 * first key to go. Nothing told the replicas (the epoch, the fence counter, the write sequence and the server's run
 * id were all still there), so the next holder took the pending error for one nobody raised, and raised it again,
 * unmarked. Redis counts what it evicted (`evicted_keys`, INFO stats): read with the run id, a count that grew is a
 * loss of data like a restart (the holder writes back what it knew open, later msgs are marked).
 * Real Redis, real eviction (`CONFIG SET maxmemory` lowered until the least recently used key of the group goes).
 */
import assert from 'assert';

import type { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import type { StoreRedis } from '../../src/coordination/stores';
import { holderOf, INSTRUMENT, pollGate, type Rec, type Sent, startGateNode, unmarked } from '../support/gate-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';

function infoField(info: string, name: string): number {
  const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : NaN;
}

describeWithRedis('review: the shared memory of raised errors evicted by Redis (maxmemory policy)', function () {
  this.timeout(60000);
  const db = useRedis();
  const coordinators: Coordinator[] = [];
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
    await db.redis.config('SET', 'maxmemory', '0').catch(() => undefined);
    await db.redis.config('SET', 'maxmemory-policy', 'noeviction').catch(() => undefined);
  });

  /**
   * Redis at its `maxmemory` (allkeys-lru) evicts least recently used keys until `victim` is gone: the victim was used
   * first, then other data (a cache beside the group, say), then the group's keys (its rounds use them all the time).
   * `tellers` (the keys by which a replica tells a loss) must have survived, or the case would be another one.
   */
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  async function evict(prefix: string, victim: string, tellers: readonly string[]): Promise<void> {
    const others = (await db.redis.keys(`${prefix}:*`)).filter((k) => k !== victim);
    await sleep(1100); // Redis's LRU clock counts seconds
    const junk = Array.from({ length: 300 }, (_, i) => `${prefix}-cache:${i}`);
    for (const k of junk) await db.redis.set(k, 'x'.repeat(256));
    await sleep(1100);
    if (others.length > 0) await db.redis.touch(...others);
    await db.redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await db.redis.config('SET', 'maxmemory-samples', '64');
    let limit = infoField(await db.redis.info('memory'), 'used_memory');
    for (let i = 0; i < 200 && (await db.redis.exists(victim)) === 1; i++) {
      limit -= 512;
      await db.redis.config('SET', 'maxmemory', String(limit));
      await db.redis.set(`${prefix}-cache:${i}`, 'x'.repeat(256)); // a write: Redis evicts before it
    }
    await db.redis.config('SET', 'maxmemory', '0');
    await db.redis.config('SET', 'maxmemory-policy', 'noeviction');
    await db.redis.del(...junk);
    assert.equal(await db.redis.exists(victim), 0, 'the shared memory of raised errors was evicted');
    const gone: string[] = [];
    for (const k of tellers) if ((await db.redis.exists(k)) === 0) gone.push(k);
    assert.deepEqual(gone, [], 'the keys that tell a loss by themselves are all there');
    assert.ok(infoField(await db.redis.info('stats'), 'evicted_keys') > 0, 'Redis counted the eviction');
  }

  it('an error raised before the eviction is never raised again unmarked by the next holder', async function () {
    if (db.harness.external) this.skip(); // CONFIG SET on a Redis of the test's own only
    const prefix = `lh-review-evict-${process.pid}`;
    const nodes = ['r0', 'r1'].map((name) => startGateNode(db.redis as unknown as StoreRedis, prefix, name, coordinators));
    const { holder, other } = await holderOf(nodes);
    const keys = new CoordinationKeys(prefix).instrument(INSTRUMENT);

    const listed = new Map<string, Rec>([['e1', { id: 'e1', title: 'clot' }]]);
    const sent: Sent[] = [];
    await pollGate(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();
    for (const n of nodes) await n.coordinator.round();

    const group = new CoordinationKeys(prefix);
    await evict(prefix, keys.shared('seen:poll'), [group.epoch, keys.lease, keys.fence, keys.seq]);

    // the rounds go on; the holder polls as ever (the instrument still lists e1), then hands over
    for (const n of nodes) await n.coordinator.round();
    await pollGate(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();
    await holder.coordinator.close();
    for (let i = 0; i < 3 && other.coordinator.held().length === 0; i++) await other.coordinator.round();
    assert.equal(other.coordinator.held().length, 1, 'the other replica holds the instrument');
    await pollGate(other, listed, sent);
    await pollGate(other, listed, sent);

    assert.equal(unmarked(sent, 'e1').length, 1, `e1 raised once unmarked: ${JSON.stringify(sent)}`);
  });
});
