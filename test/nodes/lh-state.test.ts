import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import mqtt from 'mqtt';

import { coreMqttOut, startBroker, TestBroker } from '../support/mqtt-broker';
import { useInstrument } from '../support/node-suite';
import { helper, nextMessage, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { messageWhere } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type Doc = {
  instrument: string;
  connection: { state: string };
  errors: { pending: number; mostSevere: Msg | null; list: Msg[] };
};

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string }[];
}[];

/** The core mqtt nodes of the runtime under test. */
const coreMqtt = require(
  path.join(path.dirname(require.resolve('@node-red/nodes/package.json')), 'core', 'network', '10-mqtt.js'),
) as (RED: unknown) => void;

/** The first retained msg on `topic` a new subscriber gets within `waitMs`, as the broker holds it (none: undefined). */
async function retainedOnce(url: string, topic: string, waitMs: number): Promise<Doc | undefined> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  let timer: NodeJS.Timeout | undefined;
  try {
    const got = new Promise<Doc | undefined>((resolve) => {
      // a live copy (retain false) is a publish that reached the broker after this subscription: not what is held
      client.on('message', (_t, payload, packet) => {
        if (packet.retain) resolve(JSON.parse(payload.toString()) as Doc);
      });
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    await client.subscribeAsync(topic, { qos: 1 });
    return await got;
  } finally {
    clearTimeout(timer);
    await client.endAsync();
  }
}

/**
 * The document the broker holds for a new subscriber, once it is the one `check` expects: the node's publish may
 * still be on its way (a busy machine), so a new subscriber asks again until it is, or fails after 10 s.
 */
async function retained(url: string, topic: string, check: (d: Doc) => boolean): Promise<Doc> {
  const end = Date.now() + 10_000;
  let last: Doc | undefined;
  while (Date.now() < end) {
    last = await retainedOnce(url, topic, 500);
    if (last && check(last)) return last;
  }
  throw new Error(`the broker holds no retained document as expected on ${topic}: ${JSON.stringify(last)}`);
}

describe('lh-state: the state stream through the core mqtt out node to a real broker, and the metrics page', function () {
  this.timeout(30000);
  const sim = useInstrument({ adminServer: true });
  let broker: TestBroker;
  before(async function () {
    broker = await startBroker();
  });
  after(async function () {
    await broker?.stop();
  });

  async function load(): Promise<void> {
    const server = serverFlow(sim, { withB: false });
    const flow: Msg[] = [
      ...server.nodes,
      { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
      { id: 'state', type: 'lh-state', server: 'server', rate: '20', machineInterval: '0', wires: [['out', 'doc'], ['events']] },
      ...coreMqttOut(broker),
      { id: 'doc', type: 'helper' },
      { id: 'events', type: 'helper' },
    ];
    await helper.load([...packageNodes(), tlsConfigNode, coreMqtt], flow, server.credentials);
  }

  /** The next msg on the `doc` helper node whose document `check` accepts. */
  const docWhere = (check: (d: Doc) => boolean): Promise<Msg> => messageWhere('doc', (m) => check(m.payload as Doc));

  it(`a subscriber that comes later sees the current state at once (retained), after a restart of Node-RED and the broker too [${process.env.LH_MQTT_BROKER ?? 'mosquitto if installed, else aedes'}]`, async function () {
    await load();
    const raisedEvent = nextMessage(helper.getNode('events'));
    const withError = docWhere((d) => d.errors.pending === 1);
    const error = sim.injectPendingError({ severity: 'Fatal', title: 'Clot detected' });
    const msg = await withError;
    assert.equal(msg.topic, 'lab/sim/state');
    assert.equal(msg.retain, true);
    const doc = msg.payload as Doc;
    assert.equal(doc.errors.mostSevere?.severity, 'Fatal');
    assert.equal(doc.errors.mostSevere?.id, error.id);
    // the responses it offers, by name (what a dashboard's buttons answer with)
    assert.deepEqual(
      doc.errors.mostSevere?.responses,
      error.errorResponses.map((r) => (typeof r === 'string' ? r : r.response)),
    );
    assert.ok((doc.errors.mostSevere?.responses as string[]).length > 0);
    const event = await raisedEvent;
    assert.equal(event.topic, `lab/sim/errors/A-${error.id}`);
    assert.equal((event.payload as Msg).event, 'raised');

    // the broker holds the document; a subscriber that connects now gets it at once (retained)
    const later = await retained(broker.url, 'lab/+/state', (d) => d.errors.pending === 1);
    assert.equal(later.instrument, 'sim');

    // resolved: the retained document says so; a redeploy sends the current state again
    const cleared = docWhere((d) => d.errors.pending === 0);
    sim.resolvePendingError(error.id);
    await cleared;
    // everything restarts, the broker without persistence (its retained msgs gone): the node says the state again
    await helper.unload();
    await broker.stop();
    broker = await startBroker();
    await load();
    await nextMessage(helper.getNode('doc')); // sent again once the mqtt out node has connected
    const again = await retained(broker.url, 'lab/sim/state', (d) => d.errors.pending === 0);
    assert.equal(again.instrument, 'sim');
  });

  it('serves the metrics in the Prometheus text format behind the admin auth: errors raised by severity, pending, bounded labels, no error id', async function () {
    await load();
    const withError = docWhere((d) => d.errors.pending === 1);
    const error = sim.injectPendingError({ severity: 'Warning', title: 'Door open' });
    await withError;
    const res = (await helper.request().get('/lh/metrics').expect(200)) as unknown as {
      text: string;
      headers: Record<string, string>;
    };
    assert.match(res.headers['content-type'], /^text\/plain/);
    const families = parsePrometheus(res.text);
    const byName = new Map(families.map((f) => [f.name, f]));
    const raised = byName.get('lh_errors_raised_total');
    assert.ok(raised, 'lh_errors_raised_total is on the page');
    const warning = raised.metrics.find((m) => m.labels?.instrument === 'sim' && m.labels.severity === 'warning');
    assert.ok(warning && Number(warning.value) >= 1);
    const pending = byName.get('lh_errors_pending')?.metrics.find((m) => m.labels?.instrument === 'sim');
    assert.equal(Number(pending?.value), 1);
    for (const name of [
      'lh_errors_answered_total',
      'lh_error_time_to_answer_seconds',
      'lh_instrument_up',
      'lh_audit_sync_seconds',
    ])
      assert.ok(byName.has(name), `${name} is on the page`);
    assert.ok(!res.text.includes(error.id), 'no error id in a label');
    // Prometheus's own checker where Debian's prometheus package is installed (CI installs it)
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
    if (promtool) {
      const checked = spawnSync(promtool, ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
      assert.equal(checked.status, 0, `promtool check metrics: ${checked.stdout}${checked.stderr}`);
    } else console.log('      (promtool not installed: the page was checked by parse-prometheus-text-format only)');
  });
});
