/**
 * Benchmark 5: redeploy soak. A flow with every node type of the package (lh-server with A and B, lh-steps,
 * lh-error-poll on both interfaces listening for pushes (instincterrors socket open), lh-answer-error, lh-clear-errors, lh-error-log, lh-settings,
 * lh-service-routine, lh-register-handler registering while deployed, lh-submit-recovery, lh-events holding the event
 * websocket open, lh-dialog) is fully redeployed
 * 500 times; after each deploy five operation nodes run one request each (so every cycle logs in, opens sockets,
 * registers, polls, unregisters and logs out). Active resources (process.getActiveResourcesInfo()), open
 * sockets and heap (after a forced GC; run with --expose-gc) after vs before, with the same flow deployed and settled.
 */
import fs from 'fs';

import { FlowNode, Msg, serverNode, sink, startNodeRed, tab } from './support/node-red';
import { forceGc, printTable, round, sleep, verdict, writeResult } from './support/report';
import { SimFleet } from './support/sim-fleet';

const DEPLOYS = Number(process.env.LH_BENCH_DEPLOYS ?? 500);
const WARMUP_DEPLOYS = 10;
const MB = 1024 * 1024;

const DRIVEN: { id: string; msg: Msg }[] = [
  { id: 'steps', msg: { operation: 'get', protocolId: 1, stepId: 1 } },
  { id: 'settings', msg: {} },
  { id: 'log', msg: {} },
  { id: 'routines', msg: {} },
  { id: 'clear', msg: {} },
];

function flow(baseUrl: string, instrumentUrl: string): FlowNode[] {
  const z = 't';
  const op = (id: string, type: string, extra: Record<string, unknown>): FlowNode => ({
    id,
    type,
    z,
    name: '',
    server: 'srv',
    wires: [['out']],
    ...extra,
  });
  return [
    serverNode('srv', baseUrl, instrumentUrl),
    tab(z),
    op('steps', 'lh-steps', { operation: 'msg', protocolId: '', stepId: '' }),
    {
      id: 'poll',
      type: 'lh-error-poll',
      z,
      name: '',
      server: 'srv',
      source: 'both',
      interval: '1',
      listen: true,
      wires: [['out'], ['out'], ['out']],
    },
    op('answer', 'lh-answer-error', {}),
    op('clear', 'lh-clear-errors', {}),
    op('log', 'lh-error-log', { operation: 'list', limit: '5', limitType: 'num' }),
    op('settings', 'lh-settings', { operation: 'get-software-settings' }),
    op('routines', 'lh-service-routine', { operation: 'list' }),
    op('register', 'lh-register-handler', { operation: 'check', autoRegister: true, clientKey: '', clientKeyType: 'str' }),
    op('recovery', 'lh-submit-recovery', { kind: 'action' }),
    { id: 'events', type: 'lh-events', z, name: '', server: 'srv', codes: '', wires: [['out'], ['out']] },
    op('dialog', 'lh-dialog', { viewResult: 'Ok' }),
    { id: 'catch', type: 'catch', z, scope: null, uncaught: false, wires: [['out']] },
    sink('out', z),
  ];
}

interface Snapshot {
  resources: Record<string, number>;
  sockets: number;
  heapUsedMb: number;
  rssMb: number;
}

async function snapshot(): Promise<Snapshot> {
  await sleep(1500); // keep-alive sockets and close handshakes settle; a poll or two happen
  forceGc(3);
  const resources: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
  // Idle keep-alive sockets are unref'd and so missing from getActiveResourcesInfo(): count the process's socket fds.
  const fds = fs.readdirSync('/proc/self/fd').map((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return '';
    }
  });
  const sockets = fds.filter((l) => l.startsWith('socket:')).length;
  const mem = process.memoryUsage();
  return { resources, sockets, heapUsedMb: round(mem.heapUsed / MB, 2), rssMb: round(mem.rss / MB, 1) };
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) console.warn('  (run with --expose-gc for a forced GC before the heap readings)');
  const fleet = await SimFleet.start(1);
  const { baseUrl, instrumentUrl } = fleet.addresses[0];
  const red = await startNodeRed();
  const nodes = flow(baseUrl, instrumentUrl);
  let failures = 0;
  let firstFailure = '';

  async function cycle(): Promise<void> {
    await red.deploy(nodes);
    let pending = DRIVEN.length;
    let wake: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (wake = resolve));
    red.onInput('out', (msg) => {
      if (process.env.LH_BENCH_DEBUG) console.log(JSON.stringify(msg).slice(0, 300));
      if (msg.benchDriven !== true) return;
      if (msg.error) {
        failures++;
        firstFailure ||= JSON.stringify(msg.error).slice(0, 300);
      }
      if (--pending === 0) wake();
    });
    for (const d of DRIVEN) red.node(d.id).receive({ ...d.msg, benchDriven: true });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (pending > 0) {
      failures += pending;
      firstFailure ||= `${pending} operations did not finish within 10 s`;
    }
  }

  for (let i = 0; i < WARMUP_DEPLOYS; i++) await cycle();
  const before = await snapshot();
  const errorSocketsBefore = (await fleet.socketCounts())[0];
  const started = Date.now();
  for (let i = 0; i < DEPLOYS; i++) {
    await cycle();
    if ((i + 1) % 100 === 0) console.log(`  ${i + 1} deploys, ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const seconds = (Date.now() - started) / 1000;
  const after = await snapshot();
  const errorSocketsAfter = (await fleet.socketCounts())[0];
  const simLog = await fleet.log();
  await red.stop();
  await fleet.stop();

  const types = [...new Set([...Object.keys(before.resources), ...Object.keys(after.resources)])].sort();
  const handlesBefore = Object.values(before.resources).reduce((a, b) => a + b, 0);
  const handlesAfter = Object.values(after.resources).reduce((a, b) => a + b, 0);
  const heapGrowth = after.heapUsedMb - before.heapUsedMb;
  const pass = { handles: handlesAfter <= handlesBefore, sockets: after.sockets <= before.sockets, heap: heapGrowth <= 5 };
  const rows = [
    ...types.map((t) => ({
      measure: `resource ${t}`,
      before: before.resources[t] ?? 0,
      after: after.resources[t] ?? 0,
      target: '',
      verdict: '',
    })),
    {
      measure: 'active resources, total',
      before: handlesBefore,
      after: handlesAfter,
      target: 'back to baseline',
      verdict: verdict(pass.handles),
    },
    {
      measure: 'open sockets',
      before: before.sockets,
      after: after.sockets,
      target: 'back to baseline',
      verdict: verdict(pass.sockets),
    },
    {
      measure: 'heap used after GC, MB',
      before: before.heapUsedMb,
      after: after.heapUsedMb,
      target: `growth ≤ 5 MB (${round(heapGrowth, 2)})`,
      verdict: verdict(pass.heap),
    },
    {
      measure: 'instincterrors connections (lh-error-poll listening)',
      before: errorSocketsBefore,
      after: errorSocketsAfter,
      target: '1 and 1',
      verdict: verdict(errorSocketsBefore === 1 && errorSocketsAfter === 1),
    },
    { measure: 'RSS, MB', before: before.rssMb, after: after.rssMb, target: '', verdict: '' },
  ];
  printTable(
    `Redeploy soak: ${DEPLOYS} full deploys of a flow with every node type in ${round(seconds, 1)} s (${failures} failed operations)`,
    rows,
  );
  const count = (method: string, path: string): number => simLog.filter((e) => e.method === method && e.path === path).length;
  writeResult('soak', {
    deploys: DEPLOYS,
    seconds: round(seconds, 1),
    failedOperations: failures,
    firstFailure,
    before,
    after,
    heapGrowthMb: round(heapGrowth, 2),
    errorSockets: { before: errorSocketsBefore, after: errorSocketsAfter },
    simulatorLogTail: {
      note: 'the simulator keeps its last 10,000 requests',
      logins: count('POST', '/api/v1/authenticate'),
      logouts: count('DELETE', '/api/v1/authenticate'),
    },
    pass,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
