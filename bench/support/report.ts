/** Percentiles, a plain-text table on stdout and the JSON result file in bench/results/. */
import fs from 'fs';
import os from 'os';
import path from 'path';
import { performance } from 'perf_hooks';

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export type Row = Record<string, string | number | boolean>;

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const cell = (v: unknown): string => (typeof v === 'number' ? String(round(v, 2)) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string => `| ${vals.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(cols));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(cols.map((c) => cell(r[c]))));
}

export function machine(): Record<string, unknown> {
  const nodeRedVersion = (require('node-red/package.json') as { version: string }).version;
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    node: process.version,
    nodeRed: nodeRedVersion,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os.loadavg().map((l) => round(l, 2)),
  };
}

/** Writes bench/results/<name>.json and prints where. */
export function writeResult(name: string, result: Record<string, unknown>): string {
  const dir = path.resolve(__dirname, '..', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ benchmark: name, date: new Date().toISOString(), machine: machine(), ...result }, null, 2)}\n`,
  );
  console.log(`\n-> ${path.relative(process.cwd(), file)}`);
  return file;
}

/** Wall-clock ms with sub-millisecond resolution, comparable between processes of one machine. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A full GC when node runs with --expose-gc (run-all passes it), else nothing. */
export function forceGc(times = 2): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect) for (let i = 0; i < times; i++) collect();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** PASS/MISS for a target. */
export function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}
