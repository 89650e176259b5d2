/**
 * lh-state on two Node-RED replicas, each through the core `mqtt out` node to one real broker (issue 35): a
 * subscriber sees each state change once (not once per replica), the retained document is the current one after the
 * holder is killed and the other replica takes over, and the documents stay within the node's rate while the
 * instrument's error list changes faster than that.
 */
import assert from 'assert';

import mqtt from 'mqtt';

import { startBroker, TestBroker } from '../support/mqtt-broker';
import { type FlowNode, useReplicaPair } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

interface Doc {
  errors: { pending: number; list: { id: string; title: string }[] };
  updatedAt: string;
}

interface Arrival {
  topic: string;
  doc: Doc;
  retain: boolean;
  at: number;
}

/** What a subscriber to `lab/#` got, in order of arrival. */
class Subscriber {
  readonly states: Arrival[] = [];
  readonly events: { topic: string; payload: Record<string, unknown> }[] = [];
  private constructor(private readonly client: mqtt.MqttClient) {
    client.on('message', (topic, payload, packet) => {
      const parsed = JSON.parse(payload.toString()) as Record<string, unknown>;
      if (topic.endsWith('/state'))
        this.states.push({ topic, doc: parsed as unknown as Doc, retain: packet.retain, at: Date.now() });
      else this.events.push({ topic, payload: parsed });
    });
  }

  static async connect(url: string, topic = 'lab/#'): Promise<Subscriber> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
    const s = new Subscriber(client);
    await client.subscribeAsync(topic, { qos: 1 });
    return s;
  }

  end(): Promise<void> {
    return this.client.endAsync();
  }
}

/** The same document content, time stamp aside (what a second replica's copy would repeat). */
const content = (d: Doc): string => JSON.stringify({ ...d, updatedAt: '' });

/** lh-state → core mqtt out on every replica; the broker from the test. */
function stateToBroker(broker: TestBroker, rate: string): FlowNode[] {
  return [
    {
      id: 'broker',
      type: 'mqtt-broker',
      broker: '127.0.0.1',
      port: String(broker.port),
      clientid: '',
      protocolVersion: '4',
      autoConnect: true,
      cleansession: true,
      keepalive: '60',
    },
    {
      id: 'state',
      type: 'lh-state',
      z: 'tab',
      server: 'server-i1',
      rate,
      machineInterval: '0',
      repeat: '0',
      wires: [['out'], ['out']],
    },
    { id: 'out', type: 'mqtt out', z: 'tab', broker: 'broker', topic: '', qos: '', retain: '', wires: [] },
  ];
}

describeWithRedis('lh-state on two replicas through core mqtt out to a real broker (issue 35)', function () {
  this.timeout(150_000);
  const db = useRedis();
  const pair = useReplicaPair(db, `lh-state-mqtt-${process.pid}`, 2);
  let broker: TestBroker;
  const subscribers: Subscriber[] = [];

  before(async function () {
    broker = await startBroker();
  });
  afterEach(async function () {
    for (const s of subscribers.splice(0)) await s.end();
  });
  after(async function () {
    await broker?.stop();
  });

  it(`each change arrives once, the retained state is current after a failover, the rate holds in a storm [${process.env.LH_MQTT_BROKER ?? 'mosquitto if installed, else aedes'}]`, async function () {
    const t0 = Date.now();
    const live = await Subscriber.connect(broker.url);
    subscribers.push(live);
    await pair.start({ interval: 0.5, extra: stateToBroker(broker, '1') });
    await until(async () => (await pair.holder()) !== undefined, 'a lease holder', 30_000);
    // the core mqtt out node drops what it gets before its broker node has connected, and an error's event is sent
    // once: the first error only once the holder's document (its first, or the one 2 s after the deploy) came through
    await until(() => live.states.length > 0, "the holder's first document (its mqtt out node connected)", 30_000);
    const docWith = (n: number, from = 0): Promise<void> =>
      until(() => live.states.slice(from).some((s) => s.doc.errors.pending === n), `a document with ${n} pending`, 30_000);

    // 1. three errors, one after another: each state reaches the subscriber once, from one fold (one replica)
    const errors = [];
    for (const title of ['Clot detected', 'Tip pickup failed', 'Door open']) {
      errors.push(pair.sim.injectPendingError({ title, severity: 'Error' }));
      await docWith(errors.length);
    }
    for (let n = 1; n <= 3; n++) {
      const copies = live.states.filter((s) => s.doc.errors.pending === n);
      const folds = new Set(copies.map((s) => s.doc.updatedAt));
      assert.equal(folds.size, 1, `the state with ${n} pending came from ${folds.size} folds (two replicas publishing?)`);
      assert.equal(new Set(copies.map((s) => content(s.doc))).size, 1);
    }
    // each error's event msg: the document goes out once the poll's list is in, its event when the gate passed it
    // (a Redis round trip later; two topics are not ordered anyway), so it may come just after the document
    const raisedOf = (id: string): unknown[] =>
      live.events.filter((ev) => ev.topic.endsWith(`/errors/A-${id}`) && ev.payload.event === 'raised');
    for (const e of errors) await until(() => raisedOf(e.id).length > 0, `error ${e.id} raised on its event topic`, 10_000);
    for (const e of errors) {
      const raised = raisedOf(e.id);
      assert.equal(raised.length, 1, `error ${e.id} raised on its event topic ${raised.length} times`);
    }

    // 2. the holder dies (SIGKILL); an error is resolved while nobody watches; the other replica takes over and
    // says the current state at once: 2 pending, never "0 pending" or the dead holder's 3
    const holder = await pair.holder();
    assert.ok(holder);
    const before = live.states.length;
    const killAt = Date.now() - t0;
    await holder.kill();
    pair.sim.resolvePendingError(errors[0].id);
    await docWith(2, before);
    const afterKill = live.states.slice(before);
    assert.equal(afterKill[0].doc.errors.pending, 2, `first document after the failover: ${afterKill[0].doc.errors.pending}`);
    const other = await pair.holder();
    assert.ok(other && other !== holder, 'the other replica holds the lease');
    // a subscriber that comes now gets the current state, retained
    const late = await Subscriber.connect(broker.url, 'lab/+/state');
    subscribers.push(late);
    await until(() => late.states.length > 0, 'the retained document', 10_000);
    assert.equal(late.states[0].retain, true);
    assert.equal(late.states[0].doc.errors.pending, 2);
    assert.deepEqual(late.states[0].doc.errors.list.map((e) => e.title).sort(), ['Door open', 'Tip pickup failed']);

    // 3. a storm: the error list changes every 20 ms for 4 s (polled every 0.5 s, so every poll sees a new list);
    // the node (1 a second) sends at most one document a second, and the last one says the final list
    const stormFrom = live.states.length;
    const stormStart = Date.now();
    const open = errors.slice(1).map((e) => e.id);
    let changes = 0;
    for (let i = 0; Date.now() - stormStart < 4000;) {
      // the changes due by now on the 20 ms schedule: a test process stalled on a busy machine catches up at once (the
      // instrument changed as often meanwhile) instead of making fewer changes than the documents it then counts
      for (const due = Math.floor((Date.now() - stormStart) / 20) + 1; i < due; i++) {
        if (i % 3 === 2 && open.length > 0) pair.sim.resolvePendingError(open.shift()!);
        else open.push(pair.sim.injectPendingError({ title: `storm ${i}`, severity: i % 2 ? 'Warning' : 'Error' }).id);
        changes++;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const finalCount = open.length;
    await until(
      () => live.states.length > stormFrom && live.states[live.states.length - 1].doc.errors.pending === finalCount,
      `the final document (${finalCount} pending)`,
      30_000,
    );
    const storm = live.states.slice(stormFrom);
    const lastAt = storm[storm.length - 1].at;
    // the gate spaces documents by >= 1 s on the sending replica, all sent between the storm's start and the last
    // arrival: a busier machine stretches that span, it never lets more through
    const bound = Math.floor((lastAt - stormStart) / 1000) + 1;
    assert.ok(storm.length <= bound, `${storm.length} documents in ${lastAt - stormStart} ms (bound ${bound})`);
    assert.ok(changes > 2 * storm.length, `${changes} changes coalesced into ${storm.length} documents`);
    const folds = new Set(storm.map((s) => s.doc.updatedAt));
    assert.equal(folds.size, storm.length, 'no document arrived twice');

    // over the whole test: once errors were pending, no document said "0 pending" (a standby replica publishing what
    // it never polled would), and the broker keeps the final state
    const first = live.states.findIndex((s) => s.doc.errors.pending > 0);
    const zero = live.states.slice(first).filter((s) => s.doc.errors.pending === 0);
    // the whole sequence when it fails (pending, fold time, arrival, retained): which phase sent it, and from which fold
    const seen = live.states.map(
      (s, i) => `${i}:${s.doc.errors.pending}@${s.doc.updatedAt}${s.retain ? ' R' : ''} +${s.at - t0}`,
    );
    assert.equal(
      zero.length,
      0,
      `${zero.length} documents said 0 pending while errors were pending (the holder killed at +${killAt} ms, after document ${before}; the storm from +${stormStart - t0} ms): ${seen.join(', ')}`,
    );
    const last = await Subscriber.connect(broker.url, 'lab/+/state');
    subscribers.push(last);
    await until(() => last.states.length > 0, 'the retained document', 10_000);
    assert.equal(last.states[0].doc.errors.pending, finalCount);
  });
});
