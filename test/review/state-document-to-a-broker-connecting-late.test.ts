/**
 * Review finding (flake96): the core mqtt out node drops what it is given before its broker node has connected, and a
 * state node sends its document again 2 s after a deploy for that. A broker that takes longer to connect (a remote one,
 * one down at the deploy, a busy host) got no document until the next change or *Again every* (never with 0), and an
 * error's or a run's event msg sent meanwhile is lost for good (sent once, not retained). The README now says so and
 * how a flow gets the document there at once: a status node watching the mqtt out node wired into the state node (any
 * msg in sends the current document). This test holds the connection 3 s and checks that wiring does it.
 */
import assert from 'node:assert/strict';
import path from 'path';

import mqtt from 'mqtt';

import { coreMqttOut, delayedConnections, mqttOutConnected, startBroker, TestBroker } from '../support/mqtt-broker';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, runtimeModule, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type NodeModule = (RED: unknown) => void;

const core = (file: string): NodeModule => runtimeModule<NodeModule>(path.join('@node-red/nodes', 'core', ...file.split('/')));

describe('review: the state document to a broker the mqtt out node reaches only after 2 s', function () {
  this.timeout(30000);
  const sim = useInstrument();
  let broker: TestBroker;
  let late: TestBroker;
  before(async function () {
    broker = await startBroker();
    late = await delayedConnections(broker, 3000); // stops the broker too
  });
  after(async function () {
    await late?.stop();
  });

  it('a status node watching the mqtt out node, wired into the state node, brings the document once it connected (Again every 0)', async function () {
    const seen: Msg[] = [];
    const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    try {
      watcher.on('message', (_topic, payload) => seen.push(JSON.parse(payload.toString()) as Msg));
      await watcher.subscribeAsync('lab/+/state', { qos: 1 });
      const error = sim.injectPendingError({ severity: 'Error', title: 'Clot detected' });
      const server = serverFlow(sim, { withB: false });
      const started = Date.now();
      await helper.load(
        [...packageNodes(), tlsConfigNode, core('network/10-mqtt.js'), core('common/25-status.js')],
        [
          ...server.nodes,
          { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
          { id: 'state', type: 'lh-state', server: 'server', repeat: '0', machineInterval: '0', wires: [['out'], ['out']] },
          ...coreMqttOut(late),
          { id: 'watch-out', type: 'status', scope: ['out'], wires: [['state']] },
        ],
        server.credentials,
      );
      await mqttOutConnected(helper.getNode('broker'));
      // the proxy held the connection past the state node's own resend, which went to a node not yet connected
      assert.ok(Date.now() - started >= 2500, `connected after ${Date.now() - started} ms`);
      await until(() => seen.length > 0, 'the document at the broker', 10_000);
      const errors = seen[seen.length - 1].errors as { pending: number; list: Msg[] };
      assert.equal(errors.pending, 1);
      assert.equal(errors.list[0].id, error.id);
    } finally {
      await watcher.endAsync();
    }
  });
});
