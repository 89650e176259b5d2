/**
 * Runs the benchmarks one after another, each in its own process (one embedded Node-RED per process, --expose-gc),
 * then prints a summary of bench/results/*.json. `run-all.ts throughput fleet` runs a subset. Expects a build
 * (`npm run bench` builds first): Node-RED loads the package from nodes/.
 */
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { printTable, Row } from './support/report';

const ALL = ['throughput', 'latency', 'session', 'fleet', 'soak', 'runs', 'policy', 'audit', 'ha', 'state'] as const;
type Name = (typeof ALL)[number];

const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !(ALL as readonly string[]).includes(a));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${ALL.join(', ')}`);
  process.exit(2);
}
const chosen: Name[] = asked.length > 0 ? (asked as Name[]) : [...ALL];
const resultsDir = path.join(__dirname, 'results');

type Json = Record<string, unknown>;
function read(name: Name): Json | undefined {
  const file = path.join(resultsDir, `${name}.json`);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Json) : undefined;
}

const started = Date.now();
const timings: Record<string, number> = {};
let failed = false;
for (const name of chosen) {
  console.log(`\n=== ${name} ===`);
  const t = Date.now();
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '-r', 'ts-node/register/transpile-only', path.join(__dirname, `${name}.ts`)],
    {
      stdio: 'inherit',
      cwd: path.resolve(__dirname, '..'),
      timeout: (name === 'fleet' ? 8 : 5) * 60_000, // fleet: 60 s poll-only + 150 s with pushes, and 300 simulators to start
    },
  );
  timings[name] = Math.round((Date.now() - t) / 1000);
  if (run.status !== 0) {
    failed = true;
    console.error(`${name} failed (${run.status ?? run.signal})`);
  }
}

/** One line per target, from the JSON files. */
function summary(): Row[] {
  const rows: Row[] = [];
  const tp = chosen.includes('throughput') ? read('throughput') : undefined;
  if (tp) {
    const ratios = tp.ratios as Record<string, Record<string, number>>;
    const results = tp.results as { variant: string; concurrency: number; opsPerSec: number }[];
    for (const c of Object.keys(ratios)) {
      const n = Number(c.slice(1));
      const ops = (v: string): number => results.find((r) => r.variant === v && r.concurrency === n)?.opsPerSec ?? NaN;
      const auditOff = tp.audit === 'off';
      rows.push({
        benchmark: `throughput, ${n} in flight, audit ${String(tp.audit ?? 'default')}`,
        figure:
          `lh-steps ${ops('lh')} ops/s, (a) http request ${ops('http')}, (b) axios ${ops('axios')}, (b+) axios+sync ` +
          `${ops('axios+sync')}: ${ratios[c].lhVsHttpRequest}× (a), ${ratios[c].lhVsAxios}× (b), ${ratios[c].lhVsAxiosSync}× (b+)`,
        target: auditOff ? '≥ 1.5× (a), ≥ 0.9× (b)' : '≥ 0.9× (b+)',
        met: (auditOff ? ratios[c].lhVsHttpRequest >= 1.5 && ratios[c].lhVsAxios >= 0.9 : ratios[c].lhVsAxiosSync >= 0.9)
          ? 'yes'
          : 'no',
      });
    }
  }
  const lat = chosen.includes('latency') ? read('latency') : undefined;
  if (lat) {
    for (const r of lat.results as Json[]) {
      const l = r.latencyMs as Json | undefined;
      if (!l) {
        // the flood: no detections timed, its polls and the event loop's longest stall
        rows.push({
          benchmark: `a flood of ${String(r.frames)} frames`,
          figure: `${String(r.polls)} polls, event loop stalled at most ${String(r.loopMaxMs)} ms`,
          target: 'at most 2 polls at a time, stall ≤ 200 ms',
          met: r.pass ? 'yes' : 'no',
        });
        continue;
      }
      rows.push({
        benchmark: `detection latency, ${r.mode ? `${String(r.mode)}, ` : ''}${r.configuredIntervalS} s${r.configuredIntervalS !== r.effectiveIntervalS ? ` (clamped to ${r.effectiveIntervalS} s)` : ''}`,
        figure: `p50 ${l.p50} ms, p99 ${l.p99} ms, ${r.injected} injected, ${r.lost} lost, ${r.duplicated} duplicated`,
        target: `p99 ≤ ${r.targetP99Ms} ms, 0 lost, 0 dup`,
        met: r.pass ? 'yes' : 'no',
      });
    }
  }
  const ses = chosen.includes('session') ? read('session') : undefined;
  if (ses) {
    for (const h of (ses.hours ?? [ses.hour]) as Json[]) {
      rows.push({
        benchmark: `session, simulated hour at ×${String(h.clockSpeed)}`,
        figure: `${h.logins} login(s) + ${h.renewals} renewals, 401 in the flow: ${h.flow401}`,
        target: '≤ 13 and 0',
        met: h.pass ? 'yes' : 'no',
      });
    }
    for (const b of ses.bursts as Json[]) {
      rows.push({
        benchmark: `session, ${String(b.case)}`,
        figure: `${b.logins} login(s), ${b['failed (flow)']} failed`,
        target: 'exactly 1 login',
        met: b.logins === 1 && b['failed (flow)'] === 0 ? 'yes' : 'no',
      });
    }
  }
  const fl = chosen.includes('fleet') ? read('fleet') : undefined;
  if (fl?.cpu) {
    const p = fl.pass as Record<string, boolean>;
    rows.push({
      benchmark: `fleet ${fl.instruments}, CPU`,
      figure: `${(fl.cpu as Json).shareOfOneCore} % of one core`,
      target: '≤ 10 %',
      met: p.cpu ? 'yes' : 'no',
    });
    rows.push({
      benchmark: `fleet ${fl.instruments}, RSS growth`,
      figure: `${(fl.rss as Json).growthMb} MB in ${fl.windowS} s`,
      target: '≤ 20 MB',
      met: p.rss ? 'yes' : 'no',
    });
    rows.push({
      benchmark: `fleet ${fl.instruments}, poll jitter p99`,
      figure: `${(fl.jitterMs as Json).p99} ms`,
      target: '≤ 100 ms',
      met: p.jitter ? 'yes' : 'no',
    });
  }
  const fp = fl?.push as Json | undefined;
  if (fp) {
    const p = fp.pass as Record<string, boolean>;
    rows.push({
      benchmark: `fleet ${String(fp.instruments)} with pushes, CPU`,
      figure: `${(fp.cpu as Json).shareOfOneCore} % of one core (simulators ${String((fp.simulators as Json | undefined)?.shareOfOneCore)} % apart)`,
      target: '≤ 30 %',
      met: p.cpu ? 'yes' : 'no',
    });
    rows.push({
      benchmark: `fleet ${String(fp.instruments)} with pushes, RSS growth`,
      figure: `${(fp.rss as Json).growthMb} MB in ${String(fp.windowS)} s`,
      target: '≤ 200 MB',
      met: p.rss ? 'yes' : 'no',
    });
    const latency = fp.latencyMs as Record<string, number>;
    rows.push({
      benchmark: `fleet ${String(fp.instruments)} with pushes, detection p99`,
      figure: `${latency.p99} ms (p50 ${latency.p50} ms)`,
      target: '≤ 50 ms',
      met: p.detection ? 'yes' : 'no',
    });
    rows.push({
      benchmark: `fleet ${String(fp.instruments)} with pushes, 10 % sockets dropped/min`,
      figure: `${String(fp.missed)} missed, ${String(fp.duplicated)} duplicated of ${String(fp.injected)}`,
      target: '0 and 0',
      met: p.exactlyOnce ? 'yes' : 'no',
    });
  }
  const ru = chosen.includes('runs') ? read('runs') : undefined;
  if (ru) {
    for (const phase of [ru.pushes as Json | undefined, ru.polling as Json | undefined]) {
      if (!phase) continue;
      const latency = phase.latencyMs as Record<string, number>;
      const pass = phase.pass as Record<string, boolean>;
      rows.push({
        benchmark: `runs ${String(ru.instruments)}, ${String(phase.mode)}, state changes`,
        figure: `${String(phase.missed)} missed, ${String(phase.duplicated)} duplicated`,
        target: 'none',
        met: pass.exactlyOnce ? 'yes' : 'no',
      });
      rows.push({
        benchmark: `runs ${String(ru.instruments)}, ${String(phase.mode)}, detection p99`,
        figure: `${latency.p99} ms (p50 ${latency.p50} ms)`,
        target: `≤ ${String(phase.targetP99Ms)} ms`,
        met: pass.latency ? 'yes' : 'no',
      });
    }
  }
  const so = chosen.includes('soak') ? read('soak') : undefined;
  if (so) {
    const p = so.pass as Record<string, boolean>;
    const b = so.before as Json;
    const a = so.after as Json;
    const total = (s: Json): number => Object.values(s.resources as Record<string, number>).reduce((x, y) => x + y, 0);
    rows.push({
      benchmark: `soak, ${so.deploys} redeploys`,
      figure: `resources ${total(b)} → ${total(a)}, sockets ${b.sockets} → ${a.sockets}, heap ${Number(so.heapGrowthMb) >= 0 ? '+' : ''}${String(so.heapGrowthMb)} MB`,
      target: 'baseline, baseline, ≤ 5 MB',
      met: p.handles && p.sockets && p.heap ? 'yes' : 'no',
    });
  }
  const po = chosen.includes('policy') ? read('policy') : undefined;
  if (po) {
    const l = po.latencyMs as Json;
    const p = po.pass as Record<string, boolean>;
    rows.push({
      benchmark: `error policy, ${po.errors} errors, ${po.rules} rules`,
      figure: `decision p99 ${l.p99} ms, heap +${String(po.heapGrowthMb)} MB for ${po.decided} pending defaults`,
      target: '≤ 5 ms, ≤ 10 MB',
      met: p.latency && p.heap ? 'yes' : 'no',
    });
  }
  return rows;
}

printTable(
  `Summary (${Math.round((Date.now() - started) / 1000)} s: ${Object.entries(timings)
    .map(([k, v]) => `${k} ${v} s`)
    .join(', ')})`,
  summary(),
);
if (failed) process.exit(1);
