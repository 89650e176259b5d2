import assert from 'node:assert/strict';
import fs from 'fs';
import os from 'os';
import path from 'path';

import {
  AuditLog,
  AuditRecord,
  AuditStreamKeys,
  type AuditStreamReader,
  chainFile,
  chainIndexes,
  checkpointFile,
  expandChain,
  FILE_PATTERN,
  RecordFields,
  verifyChain,
  verifyRedisChain,
  VerifyReport,
  verifyStreamChain,
} from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';

export const KEY = Buffer.from('test-checkpoint-key', 'utf8');

export function tempDir(prefix = 'lh-audit-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The mocha hooks of a describe block whose lh-server nodes write their audit chain into a fresh directory per test:
 * `settings` is the runtime's settings setter (test/support/runtime.ts runtimeSettings, passed in so that pure audit
 * tests need not load Node-RED). `dir()` is this test's directory; `records()` every record of the chain in it.
 */
export function useAuditDir(settings: (s: Record<string, unknown>) => void): { dir(): string; records(): AuditRecord[] } {
  let dir = '';
  beforeEach(function () {
    dir = tempDir();
    settings({ lhAudit: { dir, key: 'node-test-key' } });
  });
  afterEach(function () {
    settings({});
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    records() {
      const first = fs.readdirSync(dir).find((f) => FILE_PATTERN.test(f));
      if (!first) throw new Error(`no chain file in ${dir}: ${fs.readdirSync(dir).join(', ')}`);
      return expandChain(path.join(dir, first))
        .files.flatMap((f) => fs.readFileSync(f, 'utf8').split('\n'))
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as AuditRecord);
    },
  };
}

/** An intent and an outcome per action, as the transport writes them. */
export function actionFields(i: number): RecordFields[] {
  const id = `action-${i}`;
  const at = new Date(1_700_000_000_000 + i).toISOString();
  return [
    {
      phase: 'intent',
      id,
      at,
      instrument: 'https://lh.example|',
      who: { node: `n${i % 7}`, flow: 'f1' },
      what: {
        api: 'A',
        method: 'PUT',
        operation: 'set-software-settings',
        path: '/settings/software-settings',
        body: { hideKeyboard: i % 2 === 0 },
      },
    },
    {
      phase: 'outcome',
      id,
      at,
      instrument: 'https://lh.example|',
      operation: 'set-software-settings',
      outcome: { result: 'applied', status: 200, attempts: 1 },
    },
  ];
}

/** Writes `records` records (intent/outcome pairs, plus file records) into a fresh chain; returns its dir and name. */
export async function writeChain(records: number, maxFileBytes = 64 * 1024): Promise<{ dir: string; name: string }> {
  const dir = tempDir();
  const name = 'chain';
  const log = new AuditLog({ dir, name, instrument: 'https://lh.example|', key: KEY, maxFileBytes, fsync: false });
  const writes: Promise<AuditRecord>[] = [];
  for (let i = 0; writes.length < records; i++) for (const f of actionFields(i)) writes.push(log.append(f));
  await Promise.all(writes);
  await log.close();
  return { dir, name };
}

export interface ChainText {
  files: { name: string; text: string }[];
  checkpoint?: string;
}

export function readChain(dir: string, name: string): ChainText {
  const files = chainIndexes(dir, name).map((i) => {
    const file = chainFile(dir, name, i);
    return { name: path.basename(file), text: fs.readFileSync(file, 'utf8') };
  });
  const cp = checkpointFile(dir, name);
  return { files, checkpoint: fs.existsSync(cp) ? fs.readFileSync(cp, 'utf8') : undefined };
}

export function verify(chain: ChainText, key: Buffer | undefined = KEY): VerifyReport {
  return verifyChain({ files: chain.files, checkpoint: chain.checkpoint, key });
}

export const INSTRUMENT = 'https://lh.example|';
let streams = 0;

/**
 * The keys of the chain of `instrument` in a Redis stream, under a prefix of their own (its records must name that
 * instrument: verify checks that a stream holds the records of the instrument its keys name).
 */
export function freshStream(instrument = INSTRUMENT): { prefix: string; id: string; keys: AuditStreamKeys } {
  const prefix = `lh-audit-${process.pid}-${++streams}`;
  const k = new CoordinationKeys(prefix).instrument(instrument);
  return { prefix, id: k.id, keys: { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint } };
}

/** Counts the fdatasync calls of every FileHandle (the way the default write mode syncs). */
export async function countDatasyncs(dir: string): Promise<{ count: () => number; restore: () => void }> {
  const probe = await fs.promises.open(`${dir}/probe`, 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
  await probe.close();
  const original = proto.datasync;
  let count = 0;
  proto.datasync = function (this: unknown) {
    count++;
    return original.call(this);
  };
  return { count: () => count, restore: () => (proto.datasync = original) };
}

/**
 * The chain `keys` as `lh-audit verify` reads it from Redis (through `redis`), checked with `key`: in pages of 7
 * entries, so that every test of a chain in Redis also reads it across pages.
 */
export async function verifiedStream(
  redis: AuditStreamReader,
  keys: AuditStreamKeys,
  key: Buffer = KEY,
): Promise<ReturnType<typeof verifyStreamChain>> {
  return verifyRedisChain(redis, keys, key, 7);
}

// The real timer, taken when this module loads (before any test installs a fake clock): a wait that never ends fails
// its test within seconds (with the fake clock uninstalled), instead of running past mocha's timeout with the fake
// clock still installed for every test after it.
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;

/** `p`, or an error naming `what` once `ms` of real time passed (a fake clock cannot hold it). */
export function bounded<T>(p: Promise<T>, what: string, ms = 10000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => realClearTimeout(timer));
}

/** One turn of the event loop (I/O included). */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Turns of the event loop until `done`, at most `ms` of real time. */
export async function settle(done: () => boolean, what: string, ms = 10000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await turn();
  }
}

/** The seq the chain's checkpoint names (-1: none yet). */
export function checkpointSeq(dir: string, name: string): number {
  const file = checkpointFile(dir, name);
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  return text === '' ? -1 : (JSON.parse(text) as { seq: number }).seq;
}

/** Every record in the chain's files, in file order. */
export function chainRecords(dir: string, name: string): AuditRecord[] {
  return readChain(dir, name)
    .files.flatMap((f) => f.text.split('\n'))
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord);
}

/**
 * The chain of `name` in `dir` verified after a loss: nothing altered, and every record of `durable` (seq → hash: the
 * records acknowledged or heard) that no file holds left the chain incomplete and lies in a declared gap.
 */
export function assertLostInGaps(dir: string, name: string, durable: Iterable<readonly [number, string]>): VerifyReport {
  const report = verify(readChain(dir, name));
  assert.equal(report.firstBad, undefined, report.firstBad?.reason);
  const present = new Set(chainRecords(dir, name).map((r) => r.hash));
  for (const [seq, hash] of durable) {
    if (present.has(hash)) continue;
    assert.equal(report.ok, false, `#${seq} missing, the chain called complete`);
    assert.ok(
      report.gaps.some((g) => g.from <= seq && seq <= g.to),
      `durable #${seq} missing without a declared gap: ${JSON.stringify(report.gaps)}`,
    );
  }
  return report;
}
