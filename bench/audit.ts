/**
 * Benchmark 8: the audit trail's cost. 100 instrument-changing requests per second (clear errors, against the
 * simulator on loopback) for 10 s, four ways side by side: no audit, audit with fsync before sending (the default, and
 * with lhAudit.writeMode 'sync'), audit without fsync; added latency per action = p50/p99 of each minus no audit's. Then the size of a chain of
 * 10,000 records (5,000 actions) and the time `verify` takes over it.
 */
import fs from 'fs';
import os from 'os';
import path from 'path';

import { AuditLog, AuditTrail, chainFile, chainIndexes, readTail, verifyChain } from '../src/audit';
import { AuditedRequest, AuditHook, AuditIntent, AuditOutcome, LiquidHandlerClient } from '../src/client';
import { Simulator } from '../src/simulator';
import { percentile, preciseNow, printTable, round, sleep, verdict, writeResult } from './support/report';

const RATE = 100;
const SECONDS = Number(process.env.LH_BENCH_AUDIT_SECONDS ?? 10);
const TARGET_ADDED_P99_MS = 2;
const USER = { username: 'admin', password: 'labwire' };

type Variant = 'no audit' | 'audit, fsync' | 'audit, fsync, writeMode sync' | 'audit, no fsync';

/**
 * The trail, timing what each action waits for in it: its intent record, durable before the request is sent. The
 * outcome record is appended after the answer and not waited on (the transport returns the answer at once).
 */
class TimedTrail implements AuditHook {
  readonly spent: number[] = [];
  constructor(private readonly inner: AuditTrail) {}
  intent(request: AuditedRequest): AuditIntent {
    const t = preciseNow();
    const intent = this.inner.intent(request);
    intent.durable.then(
      () => this.spent.push(preciseNow() - t),
      () => undefined,
    );
    return intent;
  }
  outcome(id: string, operation: string, outcome: AuditOutcome): Promise<void> {
    return this.inner.outcome(id, operation, outcome);
  }
}

async function run(sim: Simulator, variant: Variant, dir: string): Promise<{ latencies: number[]; spent: number[] }> {
  const log =
    variant === 'no audit'
      ? undefined
      : new AuditLog({
          dir,
          name: `bench-${variant.replace(/\W+/g, '-')}`,
          instrument: sim.baseUrl,
          key: Buffer.from('k'),
          fsync: variant !== 'audit, no fsync',
          writeMode: variant === 'audit, fsync, writeMode sync' ? 'sync' : undefined,
        });
  const timed = log ? new TimedTrail(new AuditTrail(log, { instrument: sim.baseUrl })) : undefined;
  const client = new LiquidHandlerClient({ baseUrl: sim.baseUrl, credentials: USER, audit: timed });
  await client.prep.clearErrors(); // log in, warm up
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const start = preciseNow();
  for (let i = 0; i < RATE * SECONDS; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - preciseNow();
    if (wait > 0) await sleep(wait);
    const t = preciseNow();
    pending.push(client.prep.clearErrors().then(() => void latencies.push(preciseNow() - t)));
  }
  await Promise.all(pending);
  await client.close();
  await log?.close();
  return { latencies, spent: timed?.spent ?? [] };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-bench-audit-'));
  const sim = new Simulator();
  await sim.start();
  const rows: Record<string, string | number>[] = [];
  const p: Record<string, { p50: number; p99: number; auditP50: number; auditP99: number }> = {};
  try {
    for (const variant of ['no audit', 'audit, fsync', 'audit, fsync, writeMode sync', 'audit, no fsync'] as Variant[]) {
      const { latencies, spent } = await run(sim, variant, dir);
      p[variant] = {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        auditP50: percentile(spent, 50),
        auditP99: percentile(spent, 99),
      };
    }
    for (const variant of Object.keys(p)) {
      rows.push({
        variant,
        'p50 ms': round(p[variant].p50, 2),
        'p99 ms': round(p[variant].p99, 2),
        'added p50 ms': round(p[variant].p50 - p['no audit'].p50, 2),
        'added p99 ms': round(p[variant].p99 - p['no audit'].p99, 2),
        'p99 ratio': round(p[variant].p99 / p['no audit'].p99, 2),
        'waits in the trail p50 ms': variant === 'no audit' ? '' : round(p[variant].auditP50, 2),
        'waits in the trail p99 ms': variant === 'no audit' ? '' : round(p[variant].auditP99, 2),
      });
    }
    // what the disk itself costs: one small write + fdatasync, as the trail does per batch
    const probe = fs.openSync(path.join(dir, 'fsync-probe'), 'a');
    const syncs: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = preciseNow();
      fs.writeSync(probe, '{"probe":true}\n');
      fs.fdatasyncSync(probe);
      syncs.push(preciseNow() - t0);
    }
    fs.closeSync(probe);
    rows.push({
      variant: 'the disk: one write + fdatasync',
      'p50 ms': round(percentile(syncs, 50), 2),
      'p99 ms': round(percentile(syncs, 99), 2),
      'added p50 ms': '',
      'added p99 ms': '',
      'p99 ratio': '',
      'waits in the trail p50 ms': '',
      'waits in the trail p99 ms': '',
    });
    printTable(`${RATE} audited actions/s for ${SECONDS} s (clear errors over loopback HTTP)`, rows);

    // size and verify time of 10,000 records
    const log = new AuditLog({
      dir,
      name: 'size',
      instrument: sim.baseUrl,
      key: Buffer.from('k'),
      fsync: false,
      maxFileBytes: 1024 ** 3,
    });
    const trail = new AuditTrail(log, {
      instrument: sim.baseUrl,
      fallback: { node: 'a1b2c3d4e5f60718', flow: 'f0e1d2c3b4a59687' },
    });
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 5000; i++) {
      const { id, durable } = trail.intent({
        api: 'A',
        method: 'POST',
        path: '/settings/software-settings',
        operation: 'set-software-settings',
        body: { hideKeyboard: true, generateRunReport: false, allowRedWarningOverride: false, defaultAmbientTemperature: 21 },
      });
      writes.push(
        durable.then(() => trail.outcome(id, 'set-software-settings', { result: 'applied', status: 200, attempts: 1 })),
      );
    }
    await Promise.all(writes);
    await log.close();
    const files = chainIndexes(dir, 'size').map((i) => chainFile(dir, 'size', i));
    const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
    const texts = files.map((name) => ({ name, text: fs.readFileSync(name, 'utf8') }));
    const t = preciseNow();
    const report = verifyChain({ files: texts, key: Buffer.from('k') });
    const verifyMs = preciseNow() - t;
    const tail = readTail(dir, 'size');
    const sizeRows = [
      {
        records: report.records,
        'file MiB': round(bytes / 1024 / 1024, 2),
        'bytes/record': Math.round(bytes / report.records),
        'verify ms': round(verifyMs, 1),
        ok: report.ok && tail !== undefined,
      },
    ];
    printTable('a chain of 10,000 records (5,000 actions)', sizeRows);
    // the cost per action: the time it waits in the trail (its intent durable before sending)
    const added = p['audit, fsync'].auditP99;
    console.log(
      `\ntime per audited action in the trail (fsync), p99 ${round(added, 2)} ms, target <= ${TARGET_ADDED_P99_MS} ms: ` +
        `${verdict(added <= TARGET_ADDED_P99_MS)} (end-to-end p99 difference ${round(p['audit, fsync'].p99 - p['no audit'].p99, 2)} ms; ` +
        `the disk's own write + fdatasync p99 ${round(percentile(syncs, 99), 2)} ms on this machine)`,
    );
    const onLoop = p['audit, fsync, writeMode sync'].auditP99;
    console.log(
      `with settings.js lhAudit.writeMode 'sync' (write + fdatasync on Node-RED's event loop), p99 ${round(onLoop, 2)} ms: ` +
        `${verdict(onLoop <= TARGET_ADDED_P99_MS)}`,
    );
    writeResult('audit', {
      rate: RATE,
      seconds: SECONDS,
      latency: rows,
      size: sizeRows,
      addedP99Ms: added,
      targetAddedP99Ms: TARGET_ADDED_P99_MS,
    });
  } finally {
    await sim.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
