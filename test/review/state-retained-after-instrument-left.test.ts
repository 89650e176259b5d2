/**
 * Review finding (review34's left item): a state document is retained, so the broker hands it to every subscriber
 * that connects later. When the instrument left the flows (its lh-server, watch and state nodes deleted in a deploy,
 * or the lh-server renamed, which moves the document to another topic; or its Node-RED stopped), nothing told the
 * broker: the last document stayed retained for ever, a removed instrument still "online, 0 pending" on every wall
 * screen and in every unified namespace consumer, and a renamed one listed twice. A state node now clears its retained
 * document (an empty retained msg, MQTT's way of deleting one) when it is removed, and the old one when its topic moved
 * in a redeploy; and a document carries an MQTT 5 message expiry of three repeats, so one nobody sends again (a full
 * deploy stops the mqtt out node before a removed node's clearing msg reaches it; a Node-RED stopped) leaves the broker.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'path';

import mqtt from 'mqtt';

import { coreMqttOut, startBroker, TestBroker } from '../support/mqtt-broker';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const coreMqtt = require(
  path.join(path.dirname(require.resolve('@node-red/nodes/package.json')), 'core', 'network', '10-mqtt.js'),
) as (RED: unknown) => void;

describe('review: a retained state document once its instrument left the flows', function () {
  this.timeout(60000);
  const sim = useInstrument();
  let broker: TestBroker;
  before(async function () {
    broker = await startBroker();
  });
  after(async function () {
    await broker?.stop();
  });

  afterEach(async function () {
    await helper.unload();
    // the next case starts from a broker without retained documents
    const left = await retained();
    const cleaner = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    for (const topic of left.keys()) await cleaner.publishAsync(topic, '', { retain: true, qos: 1 });
    await cleaner.endAsync();
  });

  /** The core mqtt out node on an MQTT 5 connection (the broker node's protocol version 5). */
  function mqtt5Out(): Msg[] {
    return coreMqttOut(broker).map((n) => (n.type === 'mqtt-broker' ? { ...n, protocolVersion: '5' } : n));
  }

  /**
   * What the broker keeps retained under lab/# now (a fresh subscriber's view): every retained msg the broker queued
   * for the subscription, known to be in once a marker the watcher published after subscribing came back (the broker
   * sends a client's msgs in order), not after a fixed wait a busy machine may outlast (a msg still on its way then read
   * as "gone").
   */
  async function retained(): Promise<Map<string, string>> {
    const seen = new Map<string, string>();
    const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const marker = `lh-test/marker/${randomUUID()}`;
    try {
      const back = new Promise<void>((resolve) =>
        watcher.on('message', (topic, payload, packet) => {
          if (topic === marker) resolve();
          else if (packet.retain) seen.set(topic, payload.toString());
        }),
      );
      await watcher.subscribeAsync(['lab/#', marker], { qos: 1 });
      await watcher.publishAsync(marker, 'end', { qos: 1 });
      await back;
    } finally {
      await watcher.endAsync();
    }
    return seen;
  }

  function instrumentNodes(name: string, state: Msg = {}): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { name } });
    return {
      nodes: [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', machineInterval: '0', wires: [['out'], []], ...state },
      ],
      credentials: server.credentials,
    };
  }

  it('an instrument deleted from the flows leaves no retained document (deploy of the modified nodes)', async function () {
    const first = instrumentNodes('Nimbus 7');
    await helper.load([...packageNodes(), tlsConfigNode, coreMqtt], [...first.nodes, ...coreMqttOut(broker)], first.credentials);
    await until(async () => (await retained()).has('lab/Nimbus 7/state'), 'the document retained', 20_000);
    await helper.setFlows(coreMqttOut(broker) as never, 'nodes', {} as never);
    await until(async () => !(await retained()).has('lab/Nimbus 7/state'), 'the document gone', 5_000).catch(async () =>
      assert.fail(`still retained after the instrument was deleted: ${(await retained()).get('lab/Nimbus 7/state')}`),
    );
  });

  for (const end of ['deleted in a full deploy', 'gone with its Node-RED stopped'] as const) {
    it(`MQTT 5: the document leaves the broker three repeats after its instrument was ${end}`, async function () {
      // aedes (the broker where mosquitto is not installed) speaks MQTT 3.1.1 only: the broker node never connects
      if (broker.kind === 'aedes') this.skip();
      const first = instrumentNodes('Nimbus 7', { repeat: '1' });
      await helper.load([...packageNodes(), tlsConfigNode, coreMqtt], [...first.nodes, ...mqtt5Out()], first.credentials);
      await until(async () => (await retained()).has('lab/Nimbus 7/state'), 'the document retained', 20_000);
      // sent again every second: it stays while its instrument is in the flows
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      assert.ok((await retained()).has('lab/Nimbus 7/state'), 'kept while it is sent again');
      if (end === 'deleted in a full deploy') await helper.setFlows(mqtt5Out() as never, 'full', {} as never);
      else await helper.unload();
      await until(async () => !(await retained()).has('lab/Nimbus 7/state'), 'the document gone', 8_000).catch(() =>
        assert.fail(`still retained 8 s after the instrument was ${end}`),
      );
    });
  }

  it('an lh-server deleted while its state node stays in the flows leaves no retained document', async function () {
    const first = instrumentNodes('Nimbus 7');
    await helper.load([...packageNodes(), tlsConfigNode, coreMqtt], [...first.nodes, ...coreMqttOut(broker)], first.credentials);
    await until(async () => (await retained()).has('lab/Nimbus 7/state'), 'the document retained', 20_000);
    // the lh-server and the watch deleted; the state node, pointing at no lh-server now, deployed as it is
    const left = first.nodes.filter((n) => n.type === 'lh-state');
    await helper.setFlows([...left, ...coreMqttOut(broker)] as never, 'full', {} as never);
    await until(async () => !(await retained()).has('lab/Nimbus 7/state'), 'the document gone', 8_000).catch(() =>
      assert.fail('still retained after its lh-server was deleted'),
    );
  });

  it('a second state node of the instrument keeps its document when the first is deleted', async function () {
    const first = instrumentNodes('Nimbus 7');
    const twin = { id: 'twin', type: 'lh-state', server: 'server', machineInterval: '0', wires: [['out'], []] };
    await helper.load(
      [...packageNodes(), tlsConfigNode, coreMqtt],
      [...first.nodes, twin, ...coreMqttOut(broker)],
      first.credentials,
    );
    await until(async () => (await retained()).has('lab/Nimbus 7/state'), 'the document retained', 20_000);
    await helper.setFlows(
      [...first.nodes.filter((n) => n.id !== 'state'), twin, ...coreMqttOut(broker)] as never,
      'nodes',
      first.credentials as never,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.ok((await retained()).has('lab/Nimbus 7/state'), 'the other state node still publishes there');
  });

  for (const deploy of ['nodes', 'full'] as const)
    it(`a renamed instrument leaves no retained document under its old name (${deploy} deploy)`, async function () {
      const first = instrumentNodes('Nimbus 7');
      await helper.load(
        [...packageNodes(), tlsConfigNode, coreMqtt],
        [...first.nodes, ...coreMqttOut(broker)],
        first.credentials,
      );
      await until(async () => (await retained()).has('lab/Nimbus 7/state'), 'the document retained', 20_000);
      const second = instrumentNodes('Nimbus 8');
      await helper.setFlows([...second.nodes, ...coreMqttOut(broker)] as never, deploy, second.credentials as never);
      await until(async () => (await retained()).has('lab/Nimbus 8/state'), 'the document under the new name', 20_000);
      await until(async () => !(await retained()).has('lab/Nimbus 7/state'), 'the old one gone', 5_000).catch(() =>
        assert.fail('the document under the old name is still retained'),
      );
    });
});
