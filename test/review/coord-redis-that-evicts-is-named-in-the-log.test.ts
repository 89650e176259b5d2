/**
 * Review finding (coordination on a Redis that evicts keys): a Redis with a `maxmemory` and an evicting policy
 * (`allkeys-lru`, a cache's usual set-up; `volatile-lru`, the default of some managed services) drops the replicas'
 * keys when it is full, least recently used first: the memory of errors raised long ago, an answer ledger, an audit
 * chain's checkpoint. The replicas now tell an eviction as a loss of data (see
 * coord-seen-memory-evicted-by-maxmemory-policy.test.ts), but nothing said the set-up itself was the cause: the
 * lh-coordination node now says so once when it connects, naming the policy and what to set instead.
 */
import assert from 'node:assert/strict';

import { evictionWarning } from '../../src/coordination/connect';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { helper, packageNodes, startServer, stopServer, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: a Redis that evicts keys, by its INFO memory', function () {
  const info = (max: string, policy: string): string =>
    `# Memory\r\nused_memory:1024\r\nmaxmemory:${max}\r\nmaxmemory_human:x\r\nmaxmemory_policy:${policy}\r\n`;

  it('a maxmemory with an evicting policy is named, with what to set', function () {
    for (const policy of ['allkeys-lru', 'volatile-lru', 'allkeys-random', 'volatile-ttl', 'allkeys-lfu']) {
      const warning = evictionWarning(info('104857600', policy));
      assert.ok(warning, policy);
      assert.match(warning, new RegExp(`maxmemory-policy ${policy}, maxmemory 104857600 bytes`));
      assert.match(warning, /set maxmemory-policy noeviction/);
    }
  });

  it('noeviction, no maxmemory (0: no limit), or an INFO that says nothing: nothing to say', function () {
    assert.equal(evictionWarning(info('104857600', 'noeviction')), undefined);
    assert.equal(evictionWarning(info('0', 'allkeys-lru')), undefined);
    assert.equal(evictionWarning(''), undefined);
    assert.equal(evictionWarning('# Memory\r\nused_memory:1024\r\n'), undefined);
  });
});

describeWithRedis('review: the lh-coordination node on a Redis that evicts keys', function () {
  this.timeout(30000);
  const redisServer = new RedisHarness(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);

  before(async function () {
    if (redisServer.external) this.skip(); // a Redis of the test's own, set up to evict
    await redisServer.start();
  });
  after(async function () {
    await redisServer.destroy();
  });
  beforeEach(startServer);
  afterEach(async function () {
    await helper.unload();
    await stopServer();
  });

  function coordinationWarnings(): string[] {
    const log = helper.log() as unknown as { args: [Msg][] };
    return log.args
      .map(([entry]) => entry)
      .filter((entry) => entry.type === 'lh-coordination' && entry.level === 30)
      .map((entry) => String(entry.msg));
  }

  it('it says once, when it connects, that the replicas keys may be evicted and what to set', async function () {
    const coord = { id: 'coord', type: 'lh-coordination', url: redisServer.url, prefix: `lh-review-evicts-${process.pid}` };
    await helper.load([tlsConfigNode, ...packageNodes()], [coord]);
    await until(() => coordinationWarnings().some((w) => /evicts keys/.test(w)), 'the warning', 10000);
    const warnings = coordinationWarnings().filter((w) => /evicts keys/.test(w));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], /maxmemory-policy allkeys-lru, maxmemory 67108864 bytes/);
    assert.match(warnings[0], /set maxmemory-policy noeviction/);
  });
});
