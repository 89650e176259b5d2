/**
 * The lab's live picture at fleet scale (issue 35): 1,000 instruments, each with a storm of 10 lab events a second
 * for STORM_S seconds, through the lh-state logic (StateNode, one per instrument, the node's own rate gate on the real
 * clock) and the metrics registry; then the metrics page rendered with 1,000 instruments on it; then one instrument's
 * change to an MQTT subscriber through a real broker (mosquitto or aedes, test/support/mqtt-broker.ts).
 * Prints documents per second per instrument, the CPU share of a core the state logic took, the page's render time
 * (median of 20) and the change → subscriber latency p50 / p99 (500 changes).
 *   node -r ts-node/register/transpile-only bench/state.ts      (LH_BENCH_INSTRUMENTS, LH_BENCH_STORM_S)
 */
import mqtt from 'mqtt';

import { StateMsg, StateNode } from '../src/nodes/lh-state/state-node';
import { LabEvent, publishLab } from '../src/observe/lab-events';
import { LabMetrics } from '../src/observe/metrics';
import { startBroker } from '../test/support/mqtt-broker';
import { machine, percentile, preciseNow, printTable, round, sleep, writeResult } from './support/report';

const INSTRUMENTS = Number(process.env.LH_BENCH_INSTRUMENTS ?? 1000);
const STORM_S = Number(process.env.LH_BENCH_STORM_S ?? 10);
const EVENTS_PER_S = 10;
const PER_SECOND = 2;

function stormEvent(i: number, n: number): LabEvent {
  const about = { instrumentKey: `http://10.0.${i >> 8}.${i & 255}:8090|`, instrument: `bench-${i}` };
  switch (n % 4) {
    case 0:
      return {
        ...about,
        kind: 'raised',
        error: { source: 'A', id: String(n), title: 'Clot', severity: 'Error' },
        raisedAt: Date.now(),
      };
    case 1:
      return { ...about, kind: 'run', state: n % 8 === 1 ? 'Running' : 'Paused', progress: (n % 100) / 100 };
    case 2:
      return { ...about, kind: 'resolved', error: { source: 'A', id: String(n - 2), title: 'Clot', severity: 'Error' } };
    default:
      return { ...about, kind: 'connection', state: n % 8 === 3 ? 'online' : 'offline' };
  }
}

async function storm(
  eventsPerS: number,
  seconds: number,
): Promise<{ docsPerInstrumentPerS: number; maxDocsPerInstrumentPerS: number; cpuShare: number }> {
  const sent = new Array<number>(INSTRUMENTS).fill(0);
  const metrics = new LabMetrics();
  const nodes = Array.from({ length: INSTRUMENTS }, (_, i) => {
    return new StateNode({
      instrumentKey: `http://10.0.${i >> 8}.${i & 255}:8090|`,
      instrument: `bench-${i}`,
      stateTopic: 'lab/{{instrument}}/state',
      eventTopic: 'lab/{{instrument}}',
      perSecond: PER_SECOND,
      emitting: () => true,
      send: (doc) => {
        if (doc) sent[i]++;
      },
    });
  });
  const cpu0 = process.cpuUsage();
  const t0 = preciseNow();
  // every 1/eventsPerS s, each instrument gets one event
  for (let tick = 0; tick < seconds * eventsPerS; tick++) {
    const due = t0 + (tick * 1000) / eventsPerS;
    const wait = due - preciseNow();
    if (wait > 0) await sleep(wait);
    for (let i = 0; i < INSTRUMENTS; i++) publishLab(stormEvent(i, tick));
  }
  await sleep(1000 / PER_SECOND + 50); // the trailing documents
  const wall = (preciseNow() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const n of nodes) n.close();
  metrics.close();
  const perS = sent.map((s) => s / wall);
  return {
    docsPerInstrumentPerS: perS.reduce((a, b) => a + b, 0) / INSTRUMENTS,
    maxDocsPerInstrumentPerS: Math.max(...perS),
    cpuShare: (cpu.user + cpu.system) / 1e6 / wall,
  };
}

async function renderTimes(): Promise<{ p50: number; max: number; bytes: number }> {
  const metrics = new LabMetrics();
  for (let i = 0; i < INSTRUMENTS; i++) {
    const about = { instrumentKey: `k${i}`, instrument: `bench-${i}` };
    metrics.observe({ ...about, kind: 'connection', state: 'online' });
    metrics.observe({
      ...about,
      kind: 'raised',
      error: { source: 'A', id: '1', title: 't', severity: 'Error' },
      raisedAt: Date.now(),
    });
    metrics.observe({ ...about, kind: 'errors', pending: [] });
    metrics.observe({ ...about, kind: 'run-finished', result: 'completed' });
  }
  const times: number[] = [];
  let bytes = 0;
  for (let r = 0; r < 20; r++) {
    const t = preciseNow();
    bytes = (await metrics.render()).body.length;
    times.push(preciseNow() - t);
  }
  metrics.close();
  return { p50: percentile(times, 50), max: Math.max(...times), bytes };
}

async function mqttLatency(): Promise<{ p50: number; p99: number; broker: string }> {
  const broker = await startBroker();
  const pub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  const sub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  const latencies: number[] = [];
  let changedAt = 0;
  let waiting: (() => void) | undefined;
  sub.on('message', () => {
    latencies.push(preciseNow() - changedAt);
    waiting?.();
  });
  await sub.subscribeAsync('lab/+/state', { qos: 1 });
  const node = new StateNode({
    instrumentKey: 'one',
    instrument: 'one',
    stateTopic: 'lab/{{instrument}}/state',
    eventTopic: 'lab/{{instrument}}',
    perSecond: 50,
    emitting: () => true,
    send: (doc: StateMsg | null) => {
      if (doc) pub.publish(doc.topic, JSON.stringify(doc.payload), { qos: doc.qos, retain: doc.retain });
    },
  });
  for (let n = 0; n < 500; n++) {
    await sleep(25); // one change per gap of the rate (50 a second)
    const got = new Promise<void>((resolve) => (waiting = resolve));
    changedAt = preciseNow();
    node.take({ instrumentKey: 'one', instrument: 'one', kind: 'connection', state: n % 2 === 0 ? 'offline' : 'online' });
    await got;
  }
  node.close();
  await pub.endAsync();
  await sub.endAsync();
  await broker.stop();
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), broker: broker.kind };
}

async function main(): Promise<void> {
  const s = await storm(EVENTS_PER_S, STORM_S);
  const steady = await storm(0.2, STORM_S); // one change per instrument every 5 s
  const r = await renderTimes();
  const m = await mqttLatency();
  const rows = [
    {
      what: `documents / s / instrument (${INSTRUMENTS} instruments, ${EVENTS_PER_S} events/s each, ${STORM_S} s)`,
      value: round(s.docsPerInstrumentPerS, 2),
      max: round(s.maxDocsPerInstrumentPerS, 2),
      target: '≤ 2',
    },
    {
      what: 'CPU of the state logic and metrics, % of one core, in the storm',
      value: round(s.cpuShare * 100, 1),
      max: '',
      target: '',
    },
    {
      what: 'CPU of the state logic and metrics, % of one core, steady (a change per instrument every 5 s)',
      value: round(steady.cpuShare * 100, 1),
      max: '',
      target: '≤ 5',
    },
    {
      what: `metrics page render, ms (${INSTRUMENTS} instruments, ${r.bytes} bytes)`,
      value: round(r.p50, 1),
      max: round(r.max, 1),
      target: '≤ 50',
    },
    { what: `change → MQTT subscriber, ms p50 (${m.broker})`, value: round(m.p50, 2), max: round(m.p99, 2), target: 'p99 ≤ 50' },
  ];
  printTable('lh-state and metrics at fleet scale (max column: the worst instrument / render / p99)', rows);
  writeResult('state', {
    machine: machine(),
    storm: s,
    steady,
    render: r,
    mqtt: m,
    instruments: INSTRUMENTS,
    stormSeconds: STORM_S,
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
