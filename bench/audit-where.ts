/**
 * Where an audited action's wait goes (issue 20, the 2 ms p99 target): at RATE appends/s, side by side in one run
 * (each tick runs every variant once, in turn, so the other agents' load falls on all of them alike):
 *   async fs      write + fdatasync through the thread pool (FileHandle promises), as AuditLog does
 *   sync fs       writeSync + fdatasyncSync on the main thread (blocks the event loop for the fsync)
 *   async fs O_DSYNC  one write through the thread pool to a file opened O_DSYNC (durable when it returns)
 *   AuditLog      a full append (seal, hash, queue, write, checkpoint) in each writeMode: datasync (the default:
 *                 write + fdatasync through the thread pool), dsync (O_DSYNC file, one round trip), sync (main thread)
 *   Redis stream  a RedisAuditLog append (compare-and-append script on a private redis-server, no AOF): the path of
 *                 several Node-REDs with lh-coordination (skipped without redis-server)
 *   preallocated  write + fdatasync into a file already sized (written in place, its size never grows): what an
 *                 fdatasync costs when it need not commit the file's new size to the journal (issue 30's group commit)
 * Prints p50 / p99 / max in ms of each, and the median CPU of the whole process per append in µs (the thread pool's
 * too: the variants run one at a time). LH_BENCH_WHERE_SECONDS (default 10).
 */
import fs from 'fs';
import os from 'os';
import path from 'path';

import Redis from 'ioredis';

import { AuditLog, RecordFields, RedisAuditLog } from '../src/audit';
import { CoordinationKeys } from '../src/coordination/keys';
import { redisAvailable, RedisHarness } from '../test/support/redis-server';
import { percentile, preciseNow, printTable, round, sleep } from './support/report';

const RATE = 100;
const SECONDS = Number(process.env.LH_BENCH_WHERE_SECONDS ?? 10);

function fields(i: number): RecordFields {
  return {
    phase: 'intent',
    id: `bench-${i}`,
    at: new Date().toISOString(),
    instrument: 'https://lh.example|',
    who: { node: 'a1b2c3d4e5f60718', flow: 'f0e1d2c3b4a59687' },
    what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-bench-where-'));
  const line = `${JSON.stringify({ ...fields(0), v: 1, seq: 1, prev: '0'.repeat(64), hash: '0'.repeat(64) })}\n`;
  const asyncFh = await fs.promises.open(path.join(dir, 'async.jsonl'), 'a');
  const syncFd = fs.openSync(path.join(dir, 'sync.jsonl'), 'a');
  const sized = RATE * SECONDS * Buffer.byteLength(line);
  const preFh = await fs.promises.open(path.join(dir, 'pre-async.jsonl'), 'w+');
  await preFh.truncate(sized);
  const preFd = fs.openSync(path.join(dir, 'pre-sync.jsonl'), 'w+');
  fs.ftruncateSync(preFd, sized);
  let preAt = 0;
  let preSyncAt = 0;
  const log = new AuditLog({ dir, name: 'log', instrument: 'i', key: Buffer.from('k') });
  const logSync = new AuditLog({ dir, name: 'logsync', instrument: 'i', key: Buffer.from('k'), writeMode: 'sync' });
  const logDsync = new AuditLog({ dir, name: 'logdsync', instrument: 'i', key: Buffer.from('k'), writeMode: 'dsync' });
  const { O_WRONLY, O_CREAT, O_APPEND, O_DSYNC } = fs.constants;
  const dsyncFh = await fs.promises.open(path.join(dir, 'dsync.jsonl'), O_WRONLY | O_CREAT | O_APPEND | O_DSYNC);
  const harness = redisAvailable() ? new RedisHarness() : undefined;
  await harness?.start();
  const redis = harness ? new Redis(harness.url) : undefined;
  const k = new CoordinationKeys(`lh-bench-${process.pid}`).instrument('i');
  const redisLog = redis
    ? new RedisAuditLog({
        redis,
        keys: { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint },
        instrument: 'i',
        key: Buffer.from('k'),
      })
    : undefined;
  const variants: Record<string, (i: number) => Promise<unknown>> = {
    'async fs (thread pool)': async () => {
      await asyncFh.write(line);
      await asyncFh.datasync();
    },
    'sync fs (main thread)': async () => {
      fs.writeSync(syncFd, line);
      fs.fdatasyncSync(syncFd);
    },
    'async fs, preallocated (size kept)': async () => {
      await preFh.write(line, preAt);
      preAt += Buffer.byteLength(line);
      await preFh.datasync();
    },
    'sync fs, preallocated (size kept)': async () => {
      fs.writeSync(preFd, line, preSyncAt);
      preSyncAt += Buffer.byteLength(line);
      fs.fdatasyncSync(preFd);
    },
    'async fs O_DSYNC (one round trip)': () => dsyncFh.write(line),
    'AuditLog append (datasync, default)': (i) => log.append(fields(i)),
    'AuditLog append (dsync)': (i) => logDsync.append(fields(i)),
    'AuditLog append (sync)': (i) => logSync.append(fields(i)),
    ...(redisLog ? { 'RedisAuditLog append': (i: number) => redisLog.append(fields(i)) } : {}),
  };
  const spent: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const names = Object.keys(variants);
  const start = preciseNow();
  for (let i = 0; i < RATE * SECONDS; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - preciseNow();
    if (wait > 0) await sleep(wait);
    const name = names[i % names.length];
    const t = preciseNow();
    const used = process.cpuUsage();
    await variants[name](i);
    spent[name].push(preciseNow() - t);
    const { user, system } = process.cpuUsage(used);
    cpu[name].push(user + system);
  }
  await log.close();
  await logSync.close();
  await logDsync.close();
  await dsyncFh.close();
  await asyncFh.close();
  await preFh.close();
  fs.closeSync(syncFd);
  fs.closeSync(preFd);
  fs.rmSync(dir, { recursive: true, force: true });
  await redisLog?.close();
  redis?.disconnect();
  await harness?.destroy();
  printTable(
    `${RATE} durable appends/s for ${SECONDS} s, the variants in turn (${round(RATE / names.length, 1)}/s each)`,
    names.map((name) => ({
      variant: name,
      n: spent[name].length,
      'p50 ms': round(percentile(spent[name], 50), 3),
      'p99 ms': round(percentile(spent[name], 99), 3),
      'max ms': round(Math.max(...spent[name]), 3),
      'CPU µs': round(percentile(cpu[name], 50), 0),
    })),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
