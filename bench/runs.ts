/**
 * Benchmark: runs. 50 instruments (50 simulators in one child process) each run a protocol at simulation speed
 * (0.5: every state lasts longer than the poll interval, so none may be missed), all watched by one Node-RED with
 * one lh-run-watch node each (interval 1 s). Measures, for every state change of every run: whether lh-run-watch
 * reported it exactly once, and the detection latency (its output msg minus the simulator's transition time);
 * CPU of the Node-RED process as a share of one core and RSS growth over the runs.
 * Target: no state change missed or duplicated; latency p99 ≤ interval + 25 ms.
 */
import http from 'http';
import axios from 'axios';
import { FlowNode, Msg, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { SimFleet } from './support/sim-fleet';
import { forceGc, percentile, printTable, round, sleep, verdict, writeResult } from './support/report';

const INSTRUMENTS = Number(process.env.LH_BENCH_INSTRUMENTS ?? 50);
const INTERVAL_MS = 1000;
const SPEED = 0.5;
/** simulated seconds of the protocol's one step (8 s real at speed 0.5) */
const STEP_SECONDS = 4;
/** how long each run waits at Loading before load-complete (longer than the interval) */
const LOADING_MS = 2500;
const EXPECTED = ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Idle'];
const MB = 1024 * 1024;

interface Transition {
  state: string;
  at: number;
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) console.warn('  (run with --expose-gc for a forced GC before the memory readings)');
  const fleet = await SimFleet.start(INSTRUMENTS, { simulationSpeed: SPEED });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const api = axios.create({ httpAgent: agent, proxy: false, validateStatus: () => true });

  // one protocol with one step per instrument, prepared before Node-RED starts
  const protocols: number[] = [];
  const tokens: string[] = [];
  for (const a of fleet.addresses) {
    const control = a.baseUrl.replace(/\/+$/, '');
    const login = await api.post(
      `${a.baseUrl}/api/v1/authenticate`,
      { username: 'admin', password: 'labwire' },
      { headers: { 'Content-Type': 'application/json-patch+json' } },
    );
    const token = (login.data as { token: string }).token;
    const created = await api.post(`${control}/sim/protocols`, { name: 'Bench protocol' });
    const id = (created.data as { id: number }).id;
    await api.post(
      `${a.baseUrl}/api/v1/protocols/${id}/step`,
      { stepType: 'PauseStep', name: 'Wait', duration: STEP_SECONDS },
      { headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json-patch+json' } },
    );
    protocols.push(id);
    tokens.push(token);
  }

  const red = await startNodeRed();
  const flow: FlowNode[] = [tab('t')];
  fleet.addresses.forEach((a, i) => {
    flow.push(serverNode(`srv${i}`, a.baseUrl));
    flow.push({
      id: `watch${i}`,
      type: 'lh-run-watch',
      z: 't',
      server: `srv${i}`,
      interval: String(INTERVAL_MS / 1000),
      progressInterval: '5',
      wires: [[`states${i}`], [`finished${i}`], [], []],
    });
    flow.push(sink(`states${i}`, 't'), sink(`finished${i}`, 't'));
  });
  await red.deploy(flow);
  const received: { state: string; at: number }[][] = fleet.addresses.map(() => []);
  const finished: Msg[][] = fleet.addresses.map(() => []);
  fleet.addresses.forEach((_a, i) => {
    red.onInput(`states${i}`, (msg) => received[i].push({ state: String(msg.state), at: Date.now() }));
    red.onInput(`finished${i}`, (msg) => finished[i].push(msg));
  });
  await sleep(3000); // every watch has reported the initial Idle

  forceGc();
  const mem0 = process.memoryUsage();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (const r of received) r.length = 0;

  const runOne = async (i: number): Promise<void> => {
    const a = fleet.addresses[i];
    const auth = { headers: { Authorization: `Bearer ${tokens[i]}`, 'Content-Type': 'application/json' } };
    await sleep(Math.random() * INTERVAL_MS); // instruments start out of phase
    const created = await api.post(`${a.baseUrl}/api/v1/protocol-run/create`, { protocolId: protocols[i], simulate: true }, auth);
    if (created.status !== 200) throw new Error(`create on instrument ${i}: ${created.status}`);
    // Loading comes 3 simulated seconds after create; the driver sleeps instead of polling, so that its own requests
    // do not load the process under measurement while the watches detect Scheduling and Scheduled
    await sleep((3 / SPEED) * 1000 + LOADING_MS);
    const loaded = await api.put(
      `${a.baseUrl}/api/v1/protocol-run/load-complete`,
      { protocolId: protocols[i], simulate: true },
      auth,
    );
    if (loaded.status !== 204) throw new Error(`load-complete on instrument ${i}: ${loaded.status}`);
    await sleep((STEP_SECONDS / SPEED) * 1000);
    for (;;) {
      const s = await api.get(`${a.baseUrl.replace(/\/+$/, '')}/sim/run`);
      if ((s.data as { protocolRunState: number }).protocolRunState === 0) break;
      await sleep(1000);
    }
  };
  await Promise.all(fleet.addresses.map((_a, i) => runOne(i)));
  await sleep(INTERVAL_MS * 2 + 500); // the last Idle is reported

  const cpu = process.cpuUsage(cpu0);
  const elapsedUs = Number(process.hrtime.bigint() - t0) / 1000;
  forceGc();
  const mem1 = process.memoryUsage();

  const latencies: number[] = [];
  const byState: Record<string, number[]> = {};
  let missed = 0;
  let duplicated = 0;
  let wrongOrder = 0;
  for (let i = 0; i < fleet.addresses.length; i++) {
    const a = fleet.addresses[i];
    const sim = (await api.get(`${a.baseUrl.replace(/\/+$/, '')}/sim/run`)).data as { transitions: Transition[] };
    const transitions = sim.transitions;
    const got = received[i].map((r) => r.state);
    for (const state of EXPECTED) {
      const n = got.filter((s) => s === state).length;
      if (n === 0) missed++;
      if (n > 1) duplicated += n - 1;
    }
    if (got.join() !== EXPECTED.join()) wrongOrder++;
    received[i].forEach((r, k) => {
      const t = transitions.find((x) => x.state === r.state && EXPECTED.indexOf(x.state) === k);
      if (t) {
        latencies.push(r.at - t.at);
        (byState[r.state] ??= []).push(r.at - t.at);
      }
    });
    if (finished[i].length !== 1) duplicated += Math.max(0, finished[i].length - 1);
  }
  const finishedOnce = finished.filter((f) => f.length === 1 && f[0].result === 'completed').length;
  agent.destroy();
  await red.stop();
  await fleet.stop();

  const cpuShare = (cpu.user + cpu.system) / elapsedUs;
  const rssGrowthMb = (mem1.rss - mem0.rss) / MB;
  const p99 = percentile(latencies, 99);
  const result = {
    instruments: INSTRUMENTS,
    intervalMs: INTERVAL_MS,
    simulationSpeed: SPEED,
    windowS: round(elapsedUs / 1e6, 1),
    stateChanges: latencies.length,
    expectedStateChanges: INSTRUMENTS * EXPECTED.length,
    missed,
    duplicated,
    runsOutOfOrder: wrongOrder,
    finishedReportedOnce: finishedOnce,
    latencyMs: { p50: percentile(latencies, 50), p99, max: Math.max(...latencies), min: Math.min(...latencies) },
    latencyP99ByStateMs: Object.fromEntries(Object.entries(byState).map(([state, l]) => [state, percentile(l, 99)])),
    cpu: { userMs: round(cpu.user / 1000, 0), systemMs: round(cpu.system / 1000, 0), shareOfOneCore: round(cpuShare * 100, 2) },
    rss: { startMb: round(mem0.rss / MB, 1), endMb: round(mem1.rss / MB, 1), growthMb: round(rssGrowthMb, 1) },
    pass: {
      exactlyOnce: missed === 0 && duplicated === 0 && finishedOnce === INSTRUMENTS,
      latency: p99 <= INTERVAL_MS + 25,
    },
  };
  printTable(`Runs: ${INSTRUMENTS} instruments running a protocol, each watched by lh-run-watch every ${INTERVAL_MS / 1000} s`, [
    {
      measure: 'state changes reported (expected)',
      value: `${latencies.length} (${result.expectedStateChanges}), ${missed} missed, ${duplicated} duplicated`,
      target: 'none missed or duplicated',
      verdict: verdict(result.pass.exactlyOnce),
    },
    { measure: 'finished runs reported once', value: `${finishedOnce} of ${INSTRUMENTS}`, target: `${INSTRUMENTS}`, verdict: '' },
    {
      measure: 'detection latency p99 (p50, max)',
      value: `${p99} ms (${result.latencyMs.p50} ms, ${result.latencyMs.max} ms)`,
      target: `≤ ${INTERVAL_MS + 25} ms`,
      verdict: verdict(result.pass.latency),
    },
    { measure: 'CPU, share of one core', value: `${result.cpu.shareOfOneCore} %`, target: '', verdict: '' },
    {
      measure: 'RSS growth (after GC)',
      value: `${result.rss.growthMb} MB (${result.rss.startMb} → ${result.rss.endMb})`,
      target: '',
      verdict: '',
    },
  ]);
  writeResult('runs', result);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
