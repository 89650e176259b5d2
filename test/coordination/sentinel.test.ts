/**
 * lh-coordination's sentinel mode against a real `redis-server --sentinel` (one master, one replica, one sentinel):
 * leases, fenced writes and the shared stores work through the sentinel, and when the master is SIGKILLed the
 * sentinel promotes the replica and the holder keeps its lease (same fencing token) on the new master.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { coordinationSettings } from '../../src/coordination/config';
import { connectRedis, CoordinationRedis } from '../../src/coordination/connect';
import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { SharedLedger, StoreRedis } from '../../src/coordination/stores';
import { describeWithRedis } from '../support/redis-server';
import { SENTINEL_MASTER, SentinelHarness, skipTopologyUnlessAvailable } from '../support/redis-topologies';
import { until } from '../support/until';

describeWithRedis('coordination: Redis Sentinel (lh-coordination mode "sentinel")', function () {
  this.timeout(60000);
  const harness = new SentinelHarness();
  let redis: CoordinationRedis | undefined;
  let coordinator: Coordinator | undefined;

  before(async function () {
    skipTopologyUnlessAvailable(this, 'sentinel');
    await harness.start();
  });
  after(async function () {
    await coordinator?.close().catch(() => undefined);
    redis?.disconnect();
    await harness.destroy();
  });

  it('leases and the shared ledger work through the sentinel; a master failover keeps the lease and its fencing token', async function () {
    const settings = coordinationSettings({
      url: `redis://127.0.0.1:${harness.sentinelPort}`,
      mode: 'sentinel',
      sentinelName: SENTINEL_MASTER,
      prefix: `lh-sentinel-${process.pid}`,
      leaseSeconds: 5,
    });
    redis = connectRedis(settings, {});
    redis.on('error', () => undefined); // connection errors during the failover: the rounds see them
    const store = redis as unknown as StoreRedis;
    coordinator = new Coordinator({ redis: store, prefix: settings.prefix, leaseMs: settings.leaseMs, replica: 'a' });
    const inst = coordinator.join('inst');
    await until(() => inst.isHolder, 'the lease, through the sentinel', 10000);
    const token = inst.state.token;
    const keys = new CoordinationKeys(settings.prefix).instrument('inst');

    // written on the master the sentinel named
    const master = new Redis({ host: '127.0.0.1', port: harness.masterPort });
    assert.equal(await master.get(keys.lease), `${String(token)}:a`);
    const ledger = new SharedLedger(store, keys, 'A', 'a');
    const claim = await ledger.claim('e1', 'Retry', { leaseValue: inst.leaseValue('test') });
    assert.ok(claim.ok);
    await claim.confirm();
    await master.call('WAIT', '1', '2000'); // the replica has it all (Redis replicates asynchronously)
    master.disconnect();

    const killedAt = Date.now();
    await harness.killMaster();
    await until(async () => (await harness.masterNow()) === harness.replicaPort, 'the sentinel promoted the replica', 30000);
    const promotedMs = Date.now() - killedAt;
    // the holder renews on the new master: same lease, same fencing token, the ledger entry kept
    await until(
      async () => {
        try {
          await coordinator?.round();
          return inst.isHolder && (await store.get(keys.lease)) === `${String(token)}:a`;
        } catch {
          return false; // still reconnecting to the new master
        }
      },
      'the lease renewed on the new master',
      20000,
    );
    const renewedMs = Date.now() - killedAt;
    assert.equal(inst.state.token, token, 'the fencing token is unchanged');
    assert.equal((await ledger.lookup('e1'))?.outcome, 'answered', 'the ledger survived the failover');
    const again = await ledger.claim('e1', 'Abort', { by: 'alice' });
    assert.ok(!again.ok, 'the answered error is still refused');
    console.log(
      `      sentinel failover: replica promoted ${promotedMs} ms after the master was killed, lease renewed after ${renewedMs} ms (lease 5000 ms)`,
    );
  });
});
