/**
 * Benchmark: runs. 50 instruments (50 simulators in one child process) each run a protocol at simulation speed
 * (0.5: every state lasts longer than the poll interval, so none may be missed), all watched by one Node-RED with
 * one lh-run-watch node each (interval 1 s). Two phases in one run, side by side: with pushes (the simulators push
 * run events on instinctevents and lh-run-watch listens: a push triggers a poll) and with polling only ("listen for
 * pushes" off), at the same interval. Measures, for every state change of every run: whether lh-run-watch reported
 * it exactly once, and the detection latency (its output msg minus the simulator's transition time); CPU of the
 * Node-RED process as a share of one core and RSS growth over each phase.
 * Targets: no state change missed or duplicated; p99 ≤ 50 ms with pushes, ≤ interval + 25 ms polling only.
 */
import http from 'http';

import axios from 'axios';

import { FlowNode, Msg, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { forceGc, percentile, printTable, round, sleep, verdict, writeResult } from './support/report';
import { SimFleet } from './support/sim-fleet';

const INSTRUMENTS = Number(process.env.LH_BENCH_INSTRUMENTS ?? 50);
const INTERVAL_MS = 1000;
const SPEED = 0.5;
/** simulated seconds of the protocol's one step (8 s real at speed 0.5) */
const STEP_SECONDS = 4;
/** how long each run waits at Loading before load-complete (longer than the interval) */
const LOADING_MS = 2500;
const EXPECTED = ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Idle'];
const MB = 1024 * 1024;
const PUSH_TARGET_MS = 50;

interface Transition {
  state: string;
  at: number;
}

interface PhaseResult {
  mode: 'pushes' | 'polling only';
  windowS: number;
  stateChanges: number;
  expectedStateChanges: number;
  missed: number;
  duplicated: number;
  runsOutOfOrder: number;
  finishedReportedOnce: number;
  latencyMs: { p50: number; p99: number; max: number; min: number };
  latencyP99ByStateMs: Record<string, number>;
  cpu: { userMs: number; systemMs: number; shareOfOneCore: number };
  rss: { startMb: number; endMb: number; growthMb: number };
  targetP99Ms: number;
  pass: { exactlyOnce: boolean; latency: boolean };
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

  /** Deploys one lh-run-watch per instrument (listening for pushes or not), runs every protocol once, measures. */
  const phase = async (listen: boolean): Promise<PhaseResult> => {
    const p = listen ? 'push' : 'poll';
    const flow: FlowNode[] = [tab('t')];
    fleet.addresses.forEach((a, i) => {
      flow.push(serverNode(`srv${i}`, a.baseUrl));
      flow.push({
        id: `${p}watch${i}`,
        type: 'lh-run-watch',
        z: 't',
        server: `srv${i}`,
        interval: String(INTERVAL_MS / 1000),
        progressInterval: '5',
        listen,
        wires: [[`${p}states${i}`], [`${p}finished${i}`], [], []],
      });
      flow.push(sink(`${p}states${i}`, 't'), sink(`${p}finished${i}`, 't'));
    });
    await red.deploy(flow);
    const received: { state: string; at: number }[][] = fleet.addresses.map(() => []);
    const finished: Msg[][] = fleet.addresses.map(() => []);
    fleet.addresses.forEach((_a, i) => {
      red.onInput(`${p}states${i}`, (msg) => received[i].push({ state: String(msg.state), at: Date.now() }));
      red.onInput(`${p}finished${i}`, (msg) => finished[i].push(msg));
    });
    await sleep(3000); // every watch has reported the initial Idle (and opened its event socket)

    forceGc();
    const mem0 = process.memoryUsage();
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const phaseStart = Date.now();
    for (const r of received) r.length = 0;

    const runOne = async (i: number): Promise<void> => {
      const a = fleet.addresses[i];
      const auth = { headers: { Authorization: `Bearer ${tokens[i]}`, 'Content-Type': 'application/json' } };
      await sleep(Math.random() * INTERVAL_MS); // instruments start out of phase
      const created = await api.post(
        `${a.baseUrl}/api/v1/protocol-run/create`,
        { protocolId: protocols[i], simulate: true },
        auth,
      );
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
      const transitions = sim.transitions.filter((t) => t.at >= phaseStart);
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
    const p99 = percentile(latencies, 99);
    const targetP99Ms = listen ? PUSH_TARGET_MS : INTERVAL_MS + 25;
    return {
      mode: listen ? 'pushes' : 'polling only',
      windowS: round(elapsedUs / 1e6, 1),
      stateChanges: latencies.length,
      expectedStateChanges: INSTRUMENTS * EXPECTED.length,
      missed,
      duplicated,
      runsOutOfOrder: wrongOrder,
      finishedReportedOnce: finishedOnce,
      latencyMs: { p50: percentile(latencies, 50), p99, max: Math.max(...latencies), min: Math.min(...latencies) },
      latencyP99ByStateMs: Object.fromEntries(Object.entries(byState).map(([state, l]) => [state, percentile(l, 99)])),
      cpu: {
        userMs: round(cpu.user / 1000, 0),
        systemMs: round(cpu.system / 1000, 0),
        shareOfOneCore: round(((cpu.user + cpu.system) / elapsedUs) * 100, 2),
      },
      rss: { startMb: round(mem0.rss / MB, 1), endMb: round(mem1.rss / MB, 1), growthMb: round((mem1.rss - mem0.rss) / MB, 1) },
      targetP99Ms,
      pass: { exactlyOnce: missed === 0 && duplicated === 0 && finishedOnce === INSTRUMENTS, latency: p99 <= targetP99Ms },
    };
  };

  const pushes = await phase(true);
  const polling = await phase(false);
  agent.destroy();
  await red.stop();
  await fleet.stop();

  const both = `${INSTRUMENTS} instruments running a protocol, each watched by lh-run-watch polling every ${INTERVAL_MS / 1000} s`;
  const row = (
    measure: string,
    f: (r: PhaseResult) => string,
    target = '',
    met?: (r: PhaseResult) => boolean,
  ): Record<string, string> => ({
    measure,
    pushes: f(pushes),
    'polling only': f(polling),
    target,
    verdict: met ? `${verdict(met(pushes))} / ${verdict(met(polling))}` : '',
  });
  printTable(`Runs: ${both}; with pushes (instinctevents) and polling only, side by side`, [
    row(
      'state changes reported (expected)',
      (r) => `${r.stateChanges} (${r.expectedStateChanges}), ${r.missed} missed, ${r.duplicated} dup`,
      'none missed or duplicated',
      (r) => r.pass.exactlyOnce,
    ),
    row('finished runs reported once', (r) => `${r.finishedReportedOnce} of ${INSTRUMENTS}`, `${INSTRUMENTS}`),
    row('detection latency p50', (r) => `${r.latencyMs.p50} ms`),
    row(
      'detection latency p99 (max)',
      (r) => `${r.latencyMs.p99} ms (${r.latencyMs.max} ms)`,
      `≤ ${PUSH_TARGET_MS} ms / ≤ ${INTERVAL_MS + 25} ms`,
      (r) => r.pass.latency,
    ),
    row('CPU, share of one core', (r) => `${r.cpu.shareOfOneCore} %`),
    row('RSS growth (after GC)', (r) => `${r.rss.growthMb} MB (${r.rss.startMb} → ${r.rss.endMb})`),
  ]);
  writeResult('runs', {
    instruments: INSTRUMENTS,
    intervalMs: INTERVAL_MS,
    simulationSpeed: SPEED,
    pushes,
    polling,
    pass: {
      exactlyOnce: pushes.pass.exactlyOnce && polling.pass.exactlyOnce,
      latency: pushes.pass.latency && polling.pass.latency,
    },
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
