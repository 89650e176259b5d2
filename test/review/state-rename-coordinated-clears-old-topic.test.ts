/**
 * Review finding (review53): a renamed instrument's state node clears the document under the old name 2 s after the
 * deploy, but only if this Node-RED emits at that moment. With an lh-coordination node the rename restarts the
 * lh-server, which leaves the group and releases the lease (another replica takes over at once; alone, this one takes
 * it again at its next round): 2 s later this Node-RED may stand by, and the replica that ends up holding the lease
 * deployed the rename while it stood by. Nobody cleared the old topic: the renamed instrument stayed retained under its
 * old name for ever (MQTT 3.1.1, or *Again every* 0), listed twice on every wall screen. The clear now waits until
 * this Node-RED emits.
 */
import assert from 'node:assert/strict';

import { CoordinationKeys } from '../../src/coordination/keys';
import { Leases } from '../../src/coordination/leases';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: a renamed instrument with lh-coordination clears its old retained document', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();

  function flow(name: string, prefix: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { name, coordination: 'coord' } });
    return {
      nodes: [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 3 },
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', machineInterval: '0', repeat: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      credentials: server.credentials,
    };
  }

  for (const deploy of ['nodes', 'full'] as const)
    it(`the old topic gets its empty retained msg once this Node-RED holds the lease again (${deploy} deploy)`, async function () {
      const prefix = `lh-state-rename-${process.pid}-${deploy}`;
      const topics: string[] = [];
      const listen = (): void => {
        helper.getNode('doc').on('input', (m: Msg) => topics.push(`${String(m.topic)} ${m.payload === '' ? 'clear' : 'doc'}`));
      };
      const first = flow('Nimbus 7', prefix);
      await loadFlow(first.nodes, first.credentials);
      listen();
      await until(() => topics.includes('lab/Nimbus 7/state doc'), 'the document under the first name', 20_000);
      // another replica takes the lease the moment the rename's lh-server releases it, and keeps it past the 2 s
      // after the deploy (it deploys the rename later, and gives the lease back then)
      const instrumentKey = (helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey;
      const leases = new Leases(db.redis, new CoordinationKeys(prefix));
      let grabbed = '';
      const grab = (async () => {
        const until = Date.now() + 10_000;
        while (!grabbed && Date.now() < until) {
          const grant = await leases.acquire(instrumentKey, 'other-replica', 6_000);
          if (grant.token > 0) grabbed = grant.value;
        }
      })();
      const second = flow('Nimbus 8', prefix);
      await helper.setFlows(second.nodes as never, deploy, second.credentials as never);
      listen();
      await grab;
      assert.ok(grabbed, 'the other replica took the lease');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.ok(!topics.includes('lab/Nimbus 8/state doc'), 'a standby sends no document');
      await leases.release(instrumentKey, grabbed);
      await until(() => topics.includes('lab/Nimbus 8/state doc'), 'the document under the new name', 20_000);
      await until(() => topics.includes('lab/Nimbus 7/state clear'), 'the old topic cleared', 10_000).catch(() =>
        assert.fail(`the old topic was never cleared: ${JSON.stringify(topics)}`),
      );
    });
});
