/**
 * Benchmark 4: a fleet. 100 instruments (100 simulators, each on its own ports, in one child process) and, in this
 * Node-RED process, 100 lh-server config nodes with one lh-error-poll node each (interval 1 s). After a warm-up,
 * for 60 s: CPU of this process as a share of one core (process.cpuUsage), RSS growth (after a forced GC at both
 * ends; run with --expose-gc), and poll jitter from the simulators' request logs: |gap between two polls of one
 * instrument − 1 s|, p99 over all instruments.
 */
import { FlowNode, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { SimFleet } from './support/sim-fleet';
import { forceGc, percentile, printTable, round, sleep, verdict, writeResult } from './support/report';

const INSTRUMENTS = Number(process.env.LH_BENCH_INSTRUMENTS ?? 100);
const WINDOW_MS = Number(process.env.LH_BENCH_FLEET_SECONDS ?? 60) * 1000;
const WARMUP_MS = 5000;
const INTERVAL_MS = 1000;
const MB = 1024 * 1024;

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) console.warn('  (run with --expose-gc for a forced GC before the memory readings)');
  const fleet = await SimFleet.start(INSTRUMENTS);
  const red = await startNodeRed();
  const flow: FlowNode[] = [tab('t'), sink('out', 't')];
  fleet.addresses.forEach((a, i) => {
    flow.push(serverNode(`srv${i}`, a.baseUrl));
    flow.push({
      id: `poll${i}`,
      type: 'lh-error-poll',
      z: 't',
      name: '',
      server: `srv${i}`,
      source: 'A',
      interval: String(INTERVAL_MS / 1000),
      wires: [['out'], ['out'], ['out']],
    });
  });
  await red.deploy(flow);
  await sleep(WARMUP_MS);

  forceGc();
  const mem0 = process.memoryUsage();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const wallStart = Date.now();
  await sleep(WINDOW_MS);
  const cpu = process.cpuUsage(cpu0);
  const elapsedUs = Number(process.hrtime.bigint() - t0) / 1000;
  const wallEnd = Date.now();
  forceGc();
  const mem1 = process.memoryUsage();

  const logs = await fleet.logs();
  const gaps: number[] = [];
  let polls = 0;
  let failed = 0;
  let logins = 0;
  for (const log of logs) {
    const times = log
      .filter((e) => e.path === '/api/v1/errors/check-for-pending-errors' && e.time >= wallStart && e.time <= wallEnd)
      .map((e) => e.time);
    polls += times.length;
    failed += log.filter((e) => e.status >= 400).length;
    logins += log.filter((e) => e.path === '/api/v1/authenticate' && e.method === 'POST').length;
    for (let i = 1; i < times.length; i++) gaps.push(times[i] - times[i - 1]);
  }
  const jitter = gaps.map((g) => Math.abs(g - INTERVAL_MS));
  await red.stop();
  await fleet.stop();

  const cpuShare = (cpu.user + cpu.system) / elapsedUs;
  const rssGrowthMb = (mem1.rss - mem0.rss) / MB;
  const jitterP99 = percentile(jitter, 99);
  const result = {
    instruments: INSTRUMENTS,
    intervalMs: INTERVAL_MS,
    windowS: round(elapsedUs / 1e6, 1),
    polls,
    expectedPolls: Math.round((INSTRUMENTS * WINDOW_MS) / INTERVAL_MS),
    failedRequests: failed,
    logins,
    cpu: { userMs: round(cpu.user / 1000, 0), systemMs: round(cpu.system / 1000, 0), shareOfOneCore: round(cpuShare * 100, 2) },
    rss: { startMb: round(mem0.rss / MB, 1), endMb: round(mem1.rss / MB, 1), growthMb: round(rssGrowthMb, 1) },
    heapUsed: { startMb: round(mem0.heapUsed / MB, 1), endMb: round(mem1.heapUsed / MB, 1) },
    jitterMs: { p50: percentile(jitter, 50), p99: jitterP99, max: Math.max(...jitter) },
    gapMs: { p50: percentile(gaps, 50), p99: percentile(gaps, 99), min: Math.min(...gaps), max: Math.max(...gaps) },
    pass: { cpu: cpuShare <= 0.1, rss: rssGrowthMb <= 20, jitter: jitterP99 <= 100 },
  };
  printTable(
    `Fleet: ${INSTRUMENTS} instruments polled every ${INTERVAL_MS / 1000} s for ${result.windowS} s in one Node-RED process`,
    [
      {
        measure: 'CPU, share of one core',
        value: `${result.cpu.shareOfOneCore} %`,
        target: '≤ 10 %',
        verdict: verdict(result.pass.cpu),
      },
      {
        measure: 'RSS growth (after GC)',
        value: `${result.rss.growthMb} MB (${result.rss.startMb} → ${result.rss.endMb})`,
        target: '≤ 20 MB',
        verdict: verdict(result.pass.rss),
      },
      {
        measure: 'poll jitter p99 (p50)',
        value: `${jitterP99} ms (${result.jitterMs.p50} ms)`,
        target: '≤ 100 ms',
        verdict: verdict(result.pass.jitter),
      },
      { measure: 'polls (expected)', value: `${polls} (${result.expectedPolls}), ${failed} failed`, target: '', verdict: '' },
    ],
  );
  writeResult('fleet', result);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
