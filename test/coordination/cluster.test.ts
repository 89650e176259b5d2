/**
 * lh-coordination's cluster mode against a real Redis Cluster (three masters): leases of instruments whose keys live
 * on different masters, fenced writes, the shared ledger, run-watch memory and the B registration count all work
 * (a script naming keys of two hash slots would fail with CROSSSLOT).
 */
import assert from 'assert';

import Redis from 'ioredis';

import { coordinationSettings } from '../../src/coordination/config';
import { connectRedis, CoordinationRedis } from '../../src/coordination/connect';
import { Coordinator } from '../../src/coordination/coordinator';
import { StoreRedis } from '../../src/coordination/stores';
import { describeWithRedis } from '../support/redis-server';
import { ClusterHarness, skipTopologyUnlessAvailable } from '../support/redis-topologies';
import { until } from '../support/until';

describeWithRedis('coordination: Redis Cluster (lh-coordination mode "cluster")', function () {
  this.timeout(60000);
  const harness = new ClusterHarness();
  let redis: CoordinationRedis | undefined;
  const coordinators: Coordinator[] = [];

  before(async function () {
    skipTopologyUnlessAvailable(this, 'cluster');
    await harness.start();
  });
  after(async function () {
    for (const c of coordinators) await c.close().catch(() => undefined);
    redis?.disconnect();
    await harness.destroy();
  });

  it('two replicas share 6 instruments through the cluster; every store works on every master', async function () {
    const settings = coordinationSettings({
      url: harness.ports.map((p) => `redis://127.0.0.1:${p}`).join(','),
      mode: 'cluster',
      prefix: `lh-cluster-${process.pid}`,
      leaseSeconds: 3,
    });
    redis = connectRedis(settings, {});
    redis.on('error', () => undefined);
    await until(() => redis?.status === 'ready', 'the cluster client ready', 10000);
    const store = redis as unknown as StoreRedis;
    const instruments = Array.from({ length: 6 }, (_, i) => `http://sim-${i}.example|`);
    for (const name of ['a', 'b']) {
      const c = new Coordinator({ redis: store, prefix: settings.prefix, leaseMs: settings.leaseMs, replica: name });
      coordinators.push(c);
      for (const i of instruments) c.join(i);
    }
    const [a, b] = coordinators;
    await until(() => a.held().length + b.held().length === 6 && a.held().length === 3, '3 leases each', 15000);
    for (const c of coordinators) {
      for (const i of c.held()) {
        const claim = await c.ledger(i, 'A').claim('e1', 'Retry', { by: 'alice' });
        assert.ok(claim.ok, `ledger claim on ${i}`);
        await claim.confirm();
        const memory = c.memory<{ state: string }>(i, 'run:watch', (json) => JSON.parse(json) as { state: string });
        assert.deepEqual(await memory.load(), { memory: undefined });
        assert.equal(await memory.save({ state: 'Running' }), 'ok', `run memory on ${i}`);
        assert.equal(await c.registrationUsers(i, 'handler', 'add'), 1);
      }
    }
    for (const i of instruments) {
      assert.equal(await a.registrationUsers(i, 'handler-shared', 'add'), 1);
      assert.equal(await b.registrationUsers(i, 'handler-shared', 'add'), 2);
      assert.equal(await a.registrationUsers(i, 'handler-shared', 'remove'), 1, 'b still uses it');
    }
    // the instruments' keys are spread over the masters (so the above ran on more than one)
    const holding = await Promise.all(
      harness.ports.map(async (port) => {
        const node = new Redis({ host: '127.0.0.1', port });
        const found = await node.keys(`${settings.prefix}:i:*:lease`);
        node.disconnect();
        return found.length;
      }),
    );
    assert.ok(holding.filter((n) => n > 0).length >= 2, `leases on several masters: ${holding.join('/')}`);
  });
});
