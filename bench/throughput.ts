/**
 * Benchmark 1: throughput of step operations (get, list, rename in turn) through
 *   lh      the lh-steps node,
 *   http    the flow a user would draw with core nodes: function (bearer token from flow context, set by one login
 *           flow at start) -> http request (keep-alive on) -> function (read back after rename) -> done,
 *   http*   the same flow with the http request node's default (no keep-alive), for reference,
 *   axios   a bare keep-alive axios loop doing the same HTTP requests,
 *   axios+sync  the same loop that appends one record per write (the rename) to a file and fdatasyncs it before
 *           sending: the floor of a durable write-ahead record, what lh-steps with its audit trail is measured against,
 * against one simulator in a child process, 1 and 8 operations in flight, all in one run.
 * A rename is PUT + GET read-back in every variant (lh-steps reads renamed steps back), so each variant sends
 * the same requests.
 */
import fs from 'fs';
import http from 'http';
import os from 'os';
import path from 'path';
import { performance } from 'perf_hooks';

import axios from 'axios';

import type * as LabEvents from '../src/observe/lab-events';
import { EmbeddedNodeRed, FlowNode, Msg, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { percentile, printTable, round, Row, verdict, writeResult } from './support/report';
import { SimFleet } from './support/sim-fleet';

// the embedded Node-RED runs the built package: its audit trail publishes each fsync on that copy of lab-events
const builtLabEvents = require('../nodes/observe/lab-events') as typeof LabEvents;

const OPS = Number(process.env.LH_BENCH_OPS ?? 2000);
/** Each variant runs OPS operations once per round, variants interleaved (and rotated) so drift hits all alike; the median round counts. */
const ROUNDS = Number(process.env.LH_BENCH_ROUNDS ?? 5);
const WARMUP = 150;
const CONCURRENCY = (process.env.LH_BENCH_CONCURRENCY ?? '1,8').split(',').map(Number);
const RUN_LIMIT_MS = 90_000;
const KINDS = ['get', 'list', 'rename'] as const;
type Kind = (typeof KINDS)[number];

interface Op {
  seq: number;
  kind: Kind;
  protocolId: number;
  stepId: number;
  newName: string;
}

function op(seq: number): Op {
  return { seq, kind: KINDS[seq % 3], protocolId: 1, stepId: 1 + (Math.floor(seq / 3) % 3), newName: `Step ${seq}` };
}

type Runner = (o: Op) => Promise<void>;

interface RunResult {
  variant: string;
  concurrency: number;
  ops: number;
  errors: number;
  seconds: number;
  opsPerSec: number;
  p50ms: number;
  p99ms: number;
  /** CPU time of this process (Node-RED, client, harness; the simulator runs elsewhere) per operation */
  cpuUsPerOp: number;
  /** writes (renames) per audit fsync: how many intents one group commit carried (lh-steps, audit with fsync) */
  writesPerSync?: number;
}

/** Runs `count` operations keeping `concurrency` in flight; bounded by RUN_LIMIT_MS. */
async function drive(variant: string, run: Runner, count: number, concurrency: number, first = 0): Promise<RunResult> {
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  let syncs = 0;
  // only lh-steps writes audit records (a late lazy fsync of its outcomes may fall in the next variant's run)
  const stopCounting = variant === 'lh' ? builtLabEvents.onAuditSync(() => syncs++) : () => undefined;
  const deadline = started + RUN_LIMIT_MS;
  async function worker(): Promise<void> {
    while (issued < count && performance.now() < deadline) {
      const o = op(first + issued++);
      const t0 = performance.now();
      try {
        await run(o);
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
      (kindLat[o.kind] ??= []).push(performance.now() - t0);
    }
  }
  const kindLat: Record<string, number[]> = {};
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  stopCounting();
  // LH_BENCH_KINDS=1: each kind's latency (a rename's is where the audit's fsync shows)
  if (process.env.LH_BENCH_KINDS) console.log(`  ${variant} c=${concurrency}: ${kindLatencies(kindLat)}`);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    variant,
    concurrency,
    ops: latencies.length,
    errors,
    seconds: round(seconds, 2),
    opsPerSec: round(latencies.length / seconds, 0),
    p50ms: round(percentile(latencies, 50), 2),
    p99ms: round(percentile(latencies, 99), 2),
    cpuUsPerOp: round((cpu.user + cpu.system) / Math.max(1, latencies.length), 0),
    ...(syncs > 0 ? { writesPerSync: round((kindLat.rename?.length ?? 0) / syncs, 2) } : {}),
  };
}

function kindLatencies(byKind: Record<string, number[]>): string {
  return Object.entries(byKind)
    .map(
      ([kind, ms]) =>
        `${kind} p50 ${round(percentile(ms, 50), 3)} ms, mean ${round(ms.reduce((a, b) => a + b, 0) / ms.length, 3)} ms`,
    )
    .join(' | ');
}

// ---- (b) bare axios ---------------------------------------------------------------------------------

/** `journal`: each write first appends one JSON line to this file and fdatasyncs it (one fsync per write, no grouping). */
async function axiosRunner(baseUrl: string, journal?: fs.promises.FileHandle): Promise<{ run: Runner; close(): void }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const ax = axios.create({ baseURL: `${baseUrl}/api/v1`, httpAgent: agent, proxy: false });
  const login = await ax.post<{ token: string }>(
    '/authenticate',
    { username: 'admin', password: 'labwire' },
    { headers: { 'Content-Type': 'application/json-patch+json' } },
  );
  const headers = { Authorization: `Bearer ${login.data.token}` };
  const run: Runner = async (o) => {
    const step = `/protocols/${o.protocolId}/step`;
    if (o.kind === 'get') await ax.get(`${step}/${o.stepId}`, { headers });
    else if (o.kind === 'list') await ax.get(step, { headers });
    else {
      if (journal) {
        await journal.write(`${JSON.stringify({ seq: o.seq, op: 'rename', stepId: o.stepId, newName: o.newName })}\n`);
        await journal.datasync();
      }
      await ax.put(`${step}/rename/${o.stepId}`, { newName: o.newName }, { headers });
      await ax.get(`${step}/${o.stepId}`, { headers });
    }
  };
  return { run, close: () => agent.destroy() };
}

// ---- Node-RED flows ---------------------------------------------------------------------------------

const PREP_CODE = (base: string): string => `
const token = flow.get('token');
msg.headers = { Authorization: 'Bearer ' + token };
const step = '${base}/api/v1/protocols/' + msg.protocolId + '/step';
if (msg.op === 'get') { msg.method = 'GET'; msg.url = step + '/' + msg.stepId; delete msg.payload; }
else if (msg.op === 'list') { msg.method = 'GET'; msg.url = step; delete msg.payload; }
else { msg.method = 'PUT'; msg.url = step + '/rename/' + msg.stepId; msg.headers['Content-Type'] = 'application/json'; msg.payload = { newName: msg.newName }; }
return msg;`;

const AFTER_CODE = `
if (msg.statusCode >= 300) { msg.failed = true; return [msg, null]; }
if (msg.op === 'rename' && !msg.readBack) {
  msg.readBack = true; msg.method = 'GET'; msg.url = msg.url.replace('/rename/', '/');
  delete msg.payload;
  msg.headers = { Authorization: 'Bearer ' + flow.get('token') }; // msg.headers now holds the response's headers
  return [null, msg];
}
return [msg, null];`;

const LOGIN_CODE = (base: string): string => `
msg.method = 'POST';
msg.url = '${base}/api/v1/authenticate';
msg.headers = { 'Content-Type': 'application/json-patch+json' };
msg.payload = { username: 'admin', password: 'labwire' };
return msg;`;

const STORE_CODE = `flow.set('token', msg.payload.token); return msg;`;

function fn(id: string, z: string, func: string, wires: string[][]): FlowNode {
  return {
    id,
    type: 'function',
    z,
    name: id,
    func,
    outputs: wires.length,
    timeout: 0,
    noerr: 0,
    initialize: '',
    finalize: '',
    libs: [],
    wires,
  };
}

function httpRequest(id: string, z: string, persist: boolean, wires: string[][]): FlowNode {
  return {
    id,
    type: 'http request',
    z,
    name: id,
    method: 'use',
    ret: 'obj',
    paytoqs: 'ignore',
    url: '',
    tls: '',
    persist,
    proxy: '',
    insecureHTTPParser: false,
    authType: '',
    senderr: false,
    headers: [],
    wires,
  };
}

function catchAll(id: string, z: string, target: string): FlowNode {
  return { id, type: 'catch', z, scope: null, uncaught: false, wires: [[target]] };
}

function userFlow(z: string, base: string, persist: boolean): FlowNode[] {
  return [
    tab(z),
    fn(`${z}-login`, z, LOGIN_CODE(base), [[`${z}-login-req`]]),
    httpRequest(`${z}-login-req`, z, persist, [[`${z}-store`]]),
    fn(`${z}-store`, z, STORE_CODE, [[`${z}-sink`]]),
    fn(`${z}-prep`, z, PREP_CODE(base), [[`${z}-req`]]),
    httpRequest(`${z}-req`, z, persist, [[`${z}-after`]]),
    fn(`${z}-after`, z, AFTER_CODE, [[`${z}-sink`], [`${z}-req`]]),
    catchAll(`${z}-catch`, z, `${z}-sink`),
    sink(`${z}-sink`, z),
  ];
}

function lhFlow(z: string): FlowNode[] {
  return [
    tab(z),
    {
      id: `${z}-steps`,
      type: 'lh-steps',
      z,
      name: '',
      server: 'srv',
      operation: 'msg',
      protocolId: '',
      protocolIdType: 'str',
      stepId: '',
      stepIdType: 'str',
      wires: [[`${z}-sink`]],
    },
    catchAll(`${z}-catch`, z, `${z}-sink`),
    sink(`${z}-sink`, z),
  ];
}

/** Sends msgs into `entry` and settles each when its msg reaches the tab's sink (or its catch node). */
function flowRunner(red: EmbeddedNodeRed, z: string, entry: string, toMsg: (o: Op) => Msg): Runner {
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  red.onInput(`${z}-sink`, (msg) => {
    const w = waiting.get(msg.benchSeq as number);
    if (!w) return;
    waiting.delete(msg.benchSeq as number);
    if (msg.error || msg.failed) {
      if (process.env.LH_BENCH_DEBUG)
        console.error(JSON.stringify({ error: msg.error, status: msg.statusCode, payload: msg.payload, url: msg.url }));
      w.reject(new Error(JSON.stringify(msg.error ?? msg.statusCode)));
    } else w.resolve();
  });
  const node = red.node(entry);
  return (o) =>
    new Promise<void>((resolve, reject) => {
      waiting.set(o.seq, { resolve, reject });
      node.receive({ ...toMsg(o), benchSeq: o.seq });
    });
}

async function main(): Promise<void> {
  const fleet = await SimFleet.start(1);
  const { baseUrl } = fleet.addresses[0];
  // LH_BENCH_AUDIT: off, nofsync (records written, never fsynced), or a write mode of settings.js lhAudit (datasync,
  // dsync, sync); default: the package's default
  const audit = process.env.LH_BENCH_AUDIT;
  const auditOff = audit === 'off';
  const red = await startNodeRed(
    audit === 'off'
      ? { lhAudit: { enabled: false } }
      : audit === 'nofsync'
        ? { lhAudit: { fsync: false } }
        : audit
          ? { lhAudit: { writeMode: audit } }
          : {},
  );
  await red.deploy([
    serverNode('srv', baseUrl),
    ...lhFlow('lh'),
    ...userFlow('http', baseUrl, true),
    ...userFlow('httpnk', baseUrl, false),
  ]);

  // the user flows log in once, storing the token in flow context
  for (const z of ['http', 'httpnk']) {
    const stored = new Promise<void>((resolve) => red.onInput(`${z}-sink`, (m) => m.loginDone && resolve()));
    red.node(`${z}-login`).receive({ loginDone: true });
    await stored;
  }

  const ax = await axiosRunner(baseUrl);
  const journalDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-bench-journal-'));
  const journal = await fs.promises.open(path.join(journalDir, 'journal.jsonl'), 'a');
  const axSync = await axiosRunner(baseUrl, journal);
  const variants: { name: string; run: Runner }[] = [
    { name: 'axios', run: ax.run },
    { name: 'axios+sync', run: axSync.run },
    {
      name: 'http',
      run: flowRunner(red, 'http', 'http-prep', (o) => ({
        op: o.kind,
        protocolId: o.protocolId,
        stepId: o.stepId,
        newName: o.newName,
      })),
    },
    {
      name: 'http*',
      run: flowRunner(red, 'httpnk', 'httpnk-prep', (o) => ({
        op: o.kind,
        protocolId: o.protocolId,
        stepId: o.stepId,
        newName: o.newName,
      })),
    },
    {
      name: 'lh',
      run: flowRunner(red, 'lh', 'lh-steps', (o) => ({
        operation: o.kind,
        protocolId: o.protocolId,
        stepId: o.stepId,
        payload: o.kind === 'rename' ? o.newName : undefined,
      })),
    },
  ];

  // LH_BENCH_VARIANTS=lh,axios runs a subset (e.g. under --cpu-prof); the ratios need all of them
  const only = process.env.LH_BENCH_VARIANTS?.split(',');
  if (only) variants.splice(0, variants.length, ...variants.filter((v) => only.includes(v.name)));
  const all: RunResult[] = [];
  let seq = 0;
  for (const v of variants) {
    for (const c of CONCURRENCY) {
      await drive(v.name, v.run, WARMUP, c, seq);
      seq += WARMUP;
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of CONCURRENCY) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(k + round) % variants.length];
        const r = await drive(v.name, v.run, OPS, c, seq);
        seq += OPS;
        all.push(r);
        console.log(
          `  round ${round + 1} ${v.name} c=${c}: ${r.opsPerSec} ops/s, ${r.cpuUsPerOp} µs CPU/op (${r.errors} errors)` +
            (r.writesPerSync === undefined ? '' : `, ${r.writesPerSync} writes per audit fsync`),
        );
      }
    }
  }
  const results: RunResult[] = [];
  for (const c of CONCURRENCY) {
    for (const v of variants) {
      const runs = all.filter((r) => r.variant === v.name && r.concurrency === c).sort((a, b) => a.opsPerSec - b.opsPerSec);
      const median = runs[Math.floor(runs.length / 2)];
      results.push({ ...median, errors: runs.reduce((n, r) => n + r.errors, 0) });
    }
  }
  ax.close();
  axSync.close();
  await journal.close();
  fs.rmSync(journalDir, { recursive: true, force: true });
  await red.stop();
  await fleet.stop();

  if (only) return;
  const rows: Row[] = [];
  const ratios: Record<string, Record<string, number>> = {};
  for (const c of CONCURRENCY) {
    const of = (name: string): RunResult => results.find((r) => r.variant === name && r.concurrency === c) as RunResult;
    const lh = of('lh');
    const vsAxios = lh.opsPerSec / of('axios').opsPerSec;
    const vsAxiosSync = lh.opsPerSec / of('axios+sync').opsPerSec;
    const vsHttp = lh.opsPerSec / of('http').opsPerSec;
    ratios[`c${c}`] = {
      lhVsAxios: round(vsAxios, 2),
      lhVsAxiosSync: round(vsAxiosSync, 2),
      lhVsHttpRequest: round(vsHttp, 2),
      lhVsHttpRequestNoKeepAlive: round(lh.opsPerSec / of('http*').opsPerSec, 2),
    };
    for (const r of results.filter((x) => x.concurrency === c)) {
      rows.push({
        variant:
          r.variant === 'lh'
            ? 'lh-steps'
            : r.variant === 'axios'
              ? '(b) axios keep-alive loop'
              : r.variant === 'axios+sync'
                ? '(b+) same, one fdatasync’d record per write'
                : r.variant === 'http'
                  ? '(a) function + http request (keep-alive)'
                  : '(a*) same, http request default (no keep-alive)',
        'in flight': c,
        ops: r.ops,
        errors: r.errors,
        'ops/s': r.opsPerSec,
        'p50 ms': r.p50ms,
        'p99 ms': r.p99ms,
        'CPU µs/op': r.cpuUsPerOp,
        'lh-steps ×': round(lh.opsPerSec / r.opsPerSec, 2),
        'writes/fsync': r.writesPerSync ?? '',
      });
    }
    rows.push({
      // issue 30.4: audit off, lh ≥ 0.9×(b) and ≥ 1.5×(a); audit on, lh ≥ 0.9×(b+)
      variant: auditOff
        ? `targets c=${c} (audit off): lh ≥ 0.9×(b) ${verdict(vsAxios >= 0.9)}, ≥ 1.5×(a) ${verdict(vsHttp >= 1.5)}`
        : `target c=${c} (audit on): lh ≥ 0.9×(b+) ${verdict(vsAxiosSync >= 0.9)}`,
      'in flight': c,
      ops: '',
      errors: '',
      'ops/s': '',
      'p50 ms': '',
      'p99 ms': '',
      'CPU µs/op': '',
      'lh-steps ×': '',
      'writes/fsync': '',
    });
  }
  printTable(
    `Throughput (audit ${audit ?? 'default'}): ${OPS} step operations (get, list, rename + read-back) per run, median of ${ROUNDS} interleaved rounds`,
    rows,
  );
  writeResult('throughput', {
    ops: OPS,
    rounds: ROUNDS,
    warmup: WARMUP,
    results,
    ratios,
    runs: all,
    audit: audit ?? 'default',
    // issue 30.4: audit off lh ≥ 0.9×axios and ≥ 1.5×http; audit on lh ≥ 0.9×axios+sync (22.6: 0.9 and 1.5 audit on)
    targets: auditOff ? { lhVsAxios: 0.9, lhVsHttpRequest: 1.5 } : { lhVsAxiosSync: 0.9 },
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
