/**
 * Benchmark 6: lh-error-policy under load. 1,000 errors are raised over 10 s (one every 10 ms, as lh-error-poll msgs)
 * into one policy node with 20 rules; only the last rule matches (every error is checked against all 20), and it is
 * semi-automatic with a delay far beyond the run, so every error leaves a pending default (timer + context store).
 * Decision latency = from node.receive(msg) to the msg on the notify output; heap growth = heap after the 1,000
 * pending defaults minus the heap before the first error (both after a full GC).
 */
import { Simulator } from '../src/simulator';
import { Msg, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { forceGc, percentile, preciseNow, printTable, round, sleep, verdict, writeResult } from './support/report';

const ERRORS = Number(process.env.LH_BENCH_POLICY_ERRORS ?? 1000);
const OVER_MS = 10_000;
const RULES = 20;
const TARGET_P99_MS = 5;
const TARGET_HEAP_MB = 10;

function rules(): Msg[] {
  const out: Msg[] = [];
  for (let i = 0; i < RULES - 1; i++) {
    out.push({
      source: 'A',
      minSeverity: 'Fatal',
      pattern: `never-matching-${i}|nozzle ${i} jammed`,
      code: String(9000 + i),
      mode: 'walk-away',
      answer: 'Abort',
      delay: 0,
    });
  }
  out.push({
    source: 'any',
    minSeverity: '',
    pattern: 'clot|liquid level|tip',
    code: '',
    mode: 'semi-automatic',
    answer: 'Retry',
    delay: 3600,
  });
  return out;
}

function errorRecord(i: number): Msg {
  return {
    id: `bench-error-${i}-${Math.random().toString(36).slice(2)}`,
    title: 'Liquid level not detected',
    message: `No liquid was detected while aspirating from the reagent trough (channel ${i % 8}).`,
    errorResponses: [{ response: 'Retry' }, { response: 'Abort' }, { response: 'Ignore' }],
    selectedResponse: null,
    timeStamp: new Date().toISOString(),
    severity: 'Error',
    groupId: `group-${i}`,
    errorData: [],
    handled: false,
  };
}

async function main(): Promise<void> {
  const sim = new Simulator();
  await sim.start();
  const red = await startNodeRed();
  await red.deploy([
    serverNode('srv', sim.baseUrl),
    tab('t'),
    {
      id: 'policy',
      type: 'lh-error-policy',
      z: 't',
      server: 'srv',
      rules: rules(),
      by: 'policy',
      store: '',
      wires: [['notify'], ['auto'], ['escalate']],
    },
    sink('notify', 't'),
    sink('auto', 't'),
    sink('escalate', 't'),
  ]);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let automatic = 0;
  red.onInput('notify', (msg) => {
    const id = String((msg.payload as Msg).id);
    const t0 = sentAt.get(id);
    if (t0 !== undefined && (msg.policy as Msg | undefined)?.deadline) latencies.push(preciseNow() - t0);
  });
  red.onInput('auto', () => automatic++);
  red.onInput('escalate', () => automatic++);
  const policy = red.node('policy');

  // warm-up outside the measurement (JIT, first context write)
  for (let i = 0; i < 20; i++) policy.receive({ payload: errorRecord(-1 - i), source: 'A', event: 'raised' });
  await sleep(500);
  forceGc(3);
  const heapBefore = process.memoryUsage().heapUsed;

  const gap = OVER_MS / ERRORS;
  const start = preciseNow();
  for (let i = 0; i < ERRORS; i++) {
    const due = start + i * gap;
    const wait = due - preciseNow();
    if (wait > 1) await sleep(wait);
    const record = errorRecord(i);
    sentAt.set(String(record.id), preciseNow());
    policy.receive({ payload: record, source: 'A', event: 'raised', notification: `sim: Error ${String(record.title)}` });
  }
  const deadline = Date.now() + 5000;
  while (latencies.length < ERRORS && Date.now() < deadline) await sleep(50);
  sentAt.clear();
  forceGc(3);
  const heapAfter = process.memoryUsage().heapUsed;
  const heapGrowthMb = round((heapAfter - heapBefore) / 1024 / 1024, 2);

  const p50 = round(percentile(latencies, 50), 3);
  const p99 = round(percentile(latencies, 99), 3);
  const max = round(Math.max(...latencies), 3);
  const pass = {
    latency: p99 <= TARGET_P99_MS && latencies.length === ERRORS,
    heap: heapGrowthMb <= TARGET_HEAP_MB,
    noAnswers: automatic === 0,
  };
  printTable(`lh-error-policy: ${ERRORS} errors over ${OVER_MS / 1000} s, ${RULES} rules, each leaving a pending default`, [
    {
      figure: 'decision latency p50 / p99 / max',
      value: `${p50} / ${p99} / ${max} ms`,
      target: `p99 ≤ ${TARGET_P99_MS} ms`,
      verdict: verdict(pass.latency),
    },
    {
      figure: `heap growth for ${ERRORS} pending defaults`,
      value: `${heapGrowthMb} MB`,
      target: `≤ ${TARGET_HEAP_MB} MB`,
      verdict: verdict(pass.heap),
    },
    {
      figure: 'decided / answered early',
      value: `${latencies.length} / ${automatic}`,
      target: `${ERRORS} / 0`,
      verdict: verdict(latencies.length === ERRORS && pass.noAnswers),
    },
  ]);
  writeResult('policy', {
    errors: ERRORS,
    overMs: OVER_MS,
    rules: RULES,
    decided: latencies.length,
    latencyMs: { p50, p99, max },
    heapGrowthMb,
    targets: { p99Ms: TARGET_P99_MS, heapMb: TARGET_HEAP_MB },
    pass,
  });
  await red.stop();
  await sim.stop();
  if (!pass.latency || !pass.heap || !pass.noAnswers) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
