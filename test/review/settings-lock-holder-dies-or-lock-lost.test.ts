/**
 * Review check (review80) of the settings lock of fix75 (a set of software settings holds a Redis lock per instrument
 * from its read to its write): a Node-RED that died holding it delays the next set until the lock expires, then the
 * set goes (not refused); a lock taken over by another Node-RED, one whose renewal is older than its TTL (a paused
 * process, a set slower than the lock) and one whose Redis is gone are each found before the write (`confirm` throws,
 * busy or network), so the set writes nothing rather than overwrite another's merge. Real Redis, a short TTL.
 */
import assert from 'node:assert/strict';

import Redis from 'ioredis';

import { LhError } from '../../src/client';
import { ApplyLocks } from '../../src/coordination/apply-locks';
import { CoordinationKeys } from '../../src/coordination/keys';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: the settings lock when its holder dies, is slow, or loses Redis', function () {
  this.timeout(15000);
  const db = useRedis();
  let n = 0;
  const keysOf = () => new CoordinationKeys(`lh-review80-${process.pid}-${++n}`).instrument('https://lh.example');

  it('a holder that died: the next set waits for the lock to expire, then takes it', async function () {
    const keys = keysOf();
    // timed from before the dead holder's lock is written (Redis starts its 700 ms then, or later): a stall of this
    // process between the write and the take (a busy machine) cannot shorten what is measured
    const started = Date.now();
    await db.redis.set(keys.settingsLock, 'feedface:dead-replica', 'PX', 700);
    const locks = new ApplyLocks(db.redis, keys, 'r1', { ttlMs: 700 });
    const held = await locks.takeSettings('set-software-settings');
    assert.ok(Date.now() - started >= 650, `taken while the dead holder still held it (${Date.now() - started} ms)`);
    await held.confirm();
    await held.release();
    assert.equal(await db.redis.get(keys.settingsLock), null);
  });

  it('taken over by another Node-RED mid-set: confirm refuses before the write', async function () {
    const keys = keysOf();
    const held = await new ApplyLocks(db.redis, keys, 'r1', { ttlMs: 5000 }).takeSettings('set-software-settings');
    await db.redis.set(keys.settingsLock, 'beef:r2', 'PX', 5000);
    await assert.rejects(held.confirm(), (e: unknown) => e instanceof LhError && e.kind === 'busy');
    await held.release();
    assert.equal(await db.redis.get(keys.settingsLock), 'beef:r2', 'the other holder’s lock was given back');
  });

  it('a set slower than the lock (its renewal older than the TTL): confirm refuses before the write', async function () {
    const keys = keysOf();
    let now = 0;
    const held = await new ApplyLocks(db.redis, keys, 'r1', { ttlMs: 5000, now: () => now }).takeSettings('set');
    now = 6000;
    await assert.rejects(held.confirm(), (e: unknown) => e instanceof LhError && e.kind === 'busy');
    await held.release();
  });

  it('Redis lost mid-set: confirm refuses (network) before the write', async function () {
    const keys = keysOf();
    const own = new Redis(db.harness.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 });
    try {
      await new Promise((resolve) => own.once('ready', resolve));
      const held = await new ApplyLocks(own, keys, 'r1', { ttlMs: 5000 }).takeSettings('set-software-settings');
      own.disconnect();
      await assert.rejects(held.confirm(), (e: unknown) => e instanceof LhError && e.kind === 'network');
      await held.release();
    } finally {
      own.disconnect();
    }
  });
});
