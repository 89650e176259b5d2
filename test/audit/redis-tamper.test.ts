/**
 * Tamper evidence of the chain in a Redis stream (real redis-server): a chain of 1,000 records written by two
 * writers, copied per run (COPY) and tampered with by Redis commands as someone with write access to Redis would
 * (XDEL of any entry or of the tail, XTRIM of the head, the stream rebuilt with an entry edited, inserted or moved,
 * a chain rewritten with fresh hashes, the checkpoint deleted or edited): verify finds every one, and names the
 * first record that is wrong, by its stream entry.
 */
import assert from 'assert';

import fc from 'fast-check';
import Redis from 'ioredis';

import { AuditRecord, AuditStreamKeys, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY } from './chain-support';
import { edited, EditedField, editedField, editedRehashed, rewritten } from './tamper-support';

/** LH_AUDIT_TAMPER_RUNS=10000 for the full count (220 s on the shared 2-core machine: each run copies and reads a stream). */
const RUNS = Number(process.env.LH_AUDIT_TAMPER_RUNS ?? 300);

type Tamper =
  | { kind: 'edit'; at: number; field: EditedField }
  | { kind: 'edit-rehash'; at: number }
  | { kind: 'xdel'; at: number }
  | { kind: 'xdel-tail'; count: number }
  | { kind: 'xtrim-head'; keep: number }
  | { kind: 'insert'; at: number; copyOf: number }
  | { kind: 'reorder'; at: number; with: number }
  | { kind: 'rewrite-chain'; at: number }
  | { kind: 'checkpoint'; how: 'delete' | 'edit' };

const tamper: fc.Arbitrary<Tamper> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), field: editedField }),
  fc.record({ kind: fc.constant('edit-rehash' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('xdel' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('xdel-tail' as const), count: fc.integer({ min: 1, max: 50 }) }),
  fc.record({ kind: fc.constant('xtrim-head' as const), keep: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), copyOf: fc.nat() }),
  fc.record({ kind: fc.constant('reorder' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ kind: fc.constant('rewrite-chain' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('checkpoint' as const), how: fc.constantFrom('delete' as const, 'edit' as const) }),
);

describeWithRedis('audit chain in a Redis stream: tamper evidence', function () {
  const db = useRedis();
  let original: AuditStreamKeys;
  /** The original entries: [id, record JSON]. */
  let entries: [string, string][];

  before(async function () {
    this.timeout(120_000);
    original = freshStream().keys;
    const other = new Redis(db.harness.url);
    const logs = [db.redis, other].map((redis) => new RedisAuditLog({ redis, keys: original, instrument: INSTRUMENT, key: KEY }));
    const writes: Promise<AuditRecord>[] = [];
    for (let i = 0; writes.length < 1000; i++) for (const f of actionFields(i)) writes.push(logs[i % 2].append(f));
    await Promise.all(writes);
    other.disconnect();
    entries = (await db.redis.xrange(original.stream, '-', '+')).map(([id, fields]) => [id, fields[1]]);
  });

  /** A copy of the chain under keys of its own (the checkpoint too). */
  async function copy(): Promise<AuditStreamKeys> {
    const keys = freshStream().keys;
    await db.redis.copy(original.stream, keys.stream);
    await db.redis.copy(original.checkpoint, keys.checkpoint);
    return keys;
  }

  /** The stream rebuilt (DEL, then XADD with explicit ids) from other record lines: an edit in the middle. */
  async function rebuild(keys: AuditStreamKeys, lines: string[]): Promise<string[]> {
    const p = db.redis.multi().del(keys.stream);
    const ids = lines.map((_, i) => `1-${i + 1}`);
    lines.forEach((line, i) => p.xadd(keys.stream, ids[i], 'r', line));
    await p.exec();
    return ids;
  }

  /** Applies one tampering with Redis commands; returns the entry id verify must name first (undefined: any). */
  async function apply(keys: AuditStreamKeys, t: Tamper): Promise<string | undefined> {
    const lines = entries.map(([, line]) => line);
    const pick = (k: number): number => k % lines.length;
    switch (t.kind) {
      case 'edit': {
        const at = pick(t.at);
        lines[at] = JSON.stringify(edited(JSON.parse(lines[at]) as AuditRecord, t.field));
        return (await rebuild(keys, lines))[at];
      }
      case 'edit-rehash': {
        const at = pick(t.at);
        lines[at] = editedRehashed(lines[at]);
        const ids = await rebuild(keys, lines);
        return ids[at + 1]; // the next no longer follows (none after the last: the checkpoint)
      }
      case 'xdel': {
        const at = pick(t.at);
        await db.redis.xdel(keys.stream, entries[at][0]);
        return entries[at + 1]?.[0];
      }
      case 'xdel-tail': {
        await db.redis.xdel(keys.stream, ...entries.slice(-t.count).map(([id]) => id));
        return undefined;
      }
      case 'xtrim-head': {
        const keep = t.keep % lines.length;
        await db.redis.xtrim(keys.stream, 'MAXLEN', keep);
        return entries[lines.length - keep]?.[0];
      }
      case 'insert': {
        const at = pick(t.at);
        const from = pick(t.copyOf);
        lines.splice(at, 0, lines[from]);
        const ids = await rebuild(keys, lines);
        return ids[from === at ? at + 1 : at];
      }
      case 'reorder': {
        let a = pick(t.at);
        let b = pick(t.with);
        if (a === b) b = (a + 1) % lines.length;
        if (b < a) [a, b] = [b, a];
        [lines[a], lines[b]] = [lines[b], lines[a]];
        return (await rebuild(keys, lines))[a];
      }
      case 'rewrite-chain': {
        // every hash after the edit recomputed: only the signed checkpoint can tell
        const at = pick(t.at);
        lines.splice(at, lines.length - at, ...rewritten(lines.slice(at)));
        await rebuild(keys, lines);
        return undefined;
      }
      case 'checkpoint': {
        if (t.how === 'delete') await db.redis.del(keys.checkpoint);
        else {
          const cp = JSON.parse((await db.redis.get(keys.checkpoint)) ?? '{}') as Record<string, unknown>;
          await db.redis.set(keys.checkpoint, JSON.stringify({ ...cp, seq: Number(cp.seq) - 3 }));
        }
        return undefined;
      }
    }
  }

  it('an untouched chain of 1,000 records from two writers verifies, checkpoint signature checked', async function () {
    const report = verifyStreamChain(original.stream, await readStreamChain(db.redis, original), KEY);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.checkpoint, 'verified');
    assert.strictEqual(report.records, 1001);
  });

  it(`detects every random tampering by Redis commands (${RUNS} runs) and names the first bad entry`, async function () {
    this.timeout(600_000);
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(tamper, async (t) => {
        const keys = await copy();
        try {
          const first = await apply(keys, t);
          const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
          seen.set(t.kind, (seen.get(t.kind) ?? 0) + 1);
          assert.strictEqual(report.ok, false, `${JSON.stringify(t)} went undetected`);
          assert.ok(report.firstBad, 'a tampered chain names a first bad record');
          if (first !== undefined)
            assert.strictEqual(report.firstBadEntry, first, `${JSON.stringify(t)}: ${report.firstBad.reason}`);
        } finally {
          await db.redis.del(keys.stream, keys.checkpoint);
        }
      }),
      { numRuns: RUNS },
    );
    assert.strictEqual(seen.size, 9, `every kind of tampering was tried: ${[...seen.keys()].join(', ')}`);
  });
});
