/**
 * lh-coordination's Redis URL, and the URL `lh-audit verify|export` reads: a host may be an IPv6 literal,
 * `redis://[::1]:6379/2`, as any URL writes it. The runtime and the editor accept it, but the connection took the
 * URL's host name with its brackets, `[::1]`, which a socket looks up as a name in DNS: ENOTFOUND at every retry,
 * coordination never started (every replica watching alone), and the audit command could not read the chain. The
 * brackets are now taken off: the connection reaches Redis on ::1 and selects the database the path names.
 */
import assert from 'node:assert/strict';
import os from 'node:os';

import Redis from 'ioredis';

import { connectSource, parseRedisSource } from '../../src/audit/redis-source';
import { coordinationSettings } from '../../src/coordination/config';
import { connectRedis } from '../../src/coordination/connect';
import { describeWithRedis, RedisHarness } from '../support/redis-server';

/** Whether this machine has the IPv6 loopback (a container may have IPv6 switched off). */
function hasIpv6Loopback(): boolean {
  return Object.values(os.networkInterfaces()).some((list) => list?.some((a) => a.family === 'IPv6' && a.address === '::1'));
}

async function clientDatabase(redis: Redis): Promise<string> {
  const info = String(await redis.call('CLIENT', 'INFO'));
  return /\bdb=(\d+)/.exec(info)?.[1] ?? '?';
}

describeWithRedis('review: a Redis URL whose host is an IPv6 literal connects', function () {
  const harness = new RedisHarness(['--bind', '127.0.0.1', '::1']);

  before(async function () {
    if (!hasIpv6Loopback()) {
      console.warn('\n!!! SKIPPED the IPv6 Redis URL test: this machine has no ::1 loopback.\n');
      this.skip();
    }
    await harness.start();
  });
  after(async function () {
    await harness.destroy();
  });

  it('lh-coordination: redis://[::1]:<port>/3 reaches Redis and selects database 3', async function () {
    const settings = coordinationSettings({ url: `redis://[::1]:${harness.port}/3` });
    const redis = connectRedis(settings, {}) as Redis;
    const errors: string[] = [];
    redis.on('error', (err: Error) => errors.push(err.message));
    try {
      await new Promise<void>((resolve, reject) => {
        redis.once('ready', resolve);
        setTimeout(() => reject(new Error(`not connected within 3 s: ${errors.join('; ')}`)), 3000).unref();
      });
      assert.equal(await redis.ping(), 'PONG');
      assert.equal(await clientDatabase(redis), '3');
    } finally {
      redis.disconnect();
    }
  });

  it('lh-audit: redis://[::1]:<port>/2?prefix=… reaches Redis and selects database 2', async function () {
    const source = parseRedisSource(`redis://[::1]:${harness.port}/2?prefix=labwire`);
    assert.equal(source.host, '::1');
    const redis = connectSource(source);
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      assert.equal(await clientDatabase(redis), '2');
    } finally {
      redis.disconnect();
    }
  });
});
