/**
 * verify and export of a chain in Redis read it a page at a time (XRANGE … COUNT, from the entry after the last one
 * read) and hold a page, never the chain: a chain of millions of records is checked in bounded memory, as a file
 * chain is. Seeded over page sizes and tamperings: the report read in pages is the report of the chain read at once,
 * no read asks for more than a page, and a tamper in a later page is named by its entry.
 */
import assert from 'assert';
import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';

import {
  AuditRecord,
  AuditStreamKeys,
  type AuditStreamReader,
  RedisAuditLog,
  streamIdAfter,
  verifyRedisChain,
  verifyStreamChain,
} from '../../src/audit';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY, tempDir } from './chain-support';
import { edited } from './tamper-support';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');

/**
 * An id XRANGE takes on Redis 5.0 and 6.0 (the README's "Redis 5.0 or later"): `-`, `+`, `<ms>` or `<ms>-<seq>`; the
 * exclusive `(<id>` is Redis 6.2's, refused before as below.
 */
function redis5Id(id: string): void {
  if (!/^(-|\+|\d+(-\d+)?)$/.test(id)) throw new Error('ERR Invalid stream ID specified as stream command argument');
}

/**
 * The reads of `redis`, counted: XRANGE calls, the largest COUNT asked and the most entries one answer held; each
 * XRANGE's ids as Redis 5.0 takes them.
 */
function counted(redis: AuditStreamReader): AuditStreamReader & { xranges: number; largestCount: number; largestAnswer: number } {
  const reader = {
    xranges: 0,
    largestCount: 0,
    largestAnswer: 0,
    async xrange(key: string, start: string, end: string, count: 'COUNT', n: number) {
      reader.xranges++;
      redis5Id(start);
      redis5Id(end);
      reader.largestCount = Math.max(reader.largestCount, n);
      const entries = await redis.xrange(key, start, end, count, n);
      reader.largestAnswer = Math.max(reader.largestAnswer, entries.length);
      return entries;
    },
    xrevrange: (key: string, end: string, start: string, count: 'COUNT', n: number) => redis.xrevrange(key, end, start, count, n),
    get: (key: string) => redis.get(key),
  };
  return reader;
}

describeWithRedis('audit chain in Redis: verify reads it in pages', function () {
  const db = useRedis();
  let original: AuditStreamKeys;
  let entries: [string, string][];

  before(async function () {
    this.timeout(60_000);
    original = freshStream().keys;
    const log = new RedisAuditLog({ redis: db.redis, keys: original, instrument: INSTRUMENT, key: KEY });
    const writes: Promise<AuditRecord>[] = [];
    for (let i = 0; writes.length < 120; i++) for (const f of actionFields(i)) writes.push(log.append(f));
    await Promise.all(writes);
    entries = (await db.redis.xrange(original.stream, '-', '+')).map(([id, fields]) => [id, fields[1]]);
  });

  async function copy(): Promise<AuditStreamKeys> {
    const keys = freshStream().keys;
    await db.redis.copy(original.stream, keys.stream);
    await db.redis.copy(original.checkpoint, keys.checkpoint);
    return keys;
  }

  /** The stream rebuilt with other lines (ids 1-1, 1-2, …). */
  async function rebuild(keys: AuditStreamKeys, lines: string[]): Promise<string[]> {
    const p = db.redis.multi().del(keys.stream);
    const ids = lines.map((_, i) => `1-${i + 1}`);
    lines.forEach((line, i) => p.xadd(keys.stream, ids[i], 'r', line));
    await p.exec();
    return ids;
  }

  it('a record altered in the second page is named by its entry; the pages after it are not read', async function () {
    const keys = await copy();
    const lines = entries.map(([, line]) => line);
    lines[14] = JSON.stringify(edited(JSON.parse(lines[14]) as AuditRecord, 'at'));
    const ids = await rebuild(keys, lines);
    const reader = counted(db.redis);
    const report = await verifyRedisChain(reader, keys, KEY, 10);
    assert.strictEqual(report.ok, false);
    assert.strictEqual(report.firstBadEntry, ids[14], report.firstBad?.reason);
    assert.match(report.firstBad?.reason ?? '', /record #14 was altered/);
    assert.strictEqual(report.records, 14);
    assert.strictEqual(reader.xranges, 2);
    assert.strictEqual(reader.largestCount, 10);
  });

  it('pages on Redis 5.0: ids of one millisecond and a sequence at its largest lose and repeat no entry', async function () {
    const keys = await copy();
    const lines = entries.map(([, line]) => line);
    const max = 2n ** 64n - 1n;
    // the ids a stream may hold: one millisecond's sequence up to its largest value, then the next millisecond's
    const ids = lines.map((_, i) => (i < 6 ? `7-${max - 5n + BigInt(i)}` : `8-${i - 6}`));
    const p = db.redis.multi().del(keys.stream);
    lines.forEach((line, i) => p.xadd(keys.stream, ids[i], 'r', line));
    await p.exec();
    for (const page of [1, 2, 3, 5, 7]) {
      const report = await verifyRedisChain(counted(db.redis), keys, KEY, page);
      assert.strictEqual(report.ok, true, `page ${page}: ${report.firstBad?.reason ?? ''}`);
      assert.strictEqual(report.records, lines.length, `page ${page}`);
    }
    assert.strictEqual(streamIdAfter(`7-${max}`), '8-0');
    assert.strictEqual(streamIdAfter('1700000000000-41'), '1700000000000-42');
  });

  it('seeded: at any page size the report is the one of the chain read at once, and no read asks for more than a page', async function () {
    this.timeout(120_000);
    const kinds = ['none', 'edit', 'xdel', 'insert', 'reorder', 'xdel-tail', 'checkpoint', 'appended'] as const;
    const seen = new Set<string>();
    for (let seed = 1; seed <= 80; seed++) {
      const rng = new Rng(seed);
      const page = rng.int(1, 40);
      const kind = rng.pick(kinds);
      seen.add(kind);
      const keys = await copy();
      try {
        const lines = entries.map(([, line]) => line);
        const at = rng.below(lines.length);
        if (kind === 'edit') {
          lines[at] = JSON.stringify(edited(JSON.parse(lines[at]) as AuditRecord, 'at'));
          await rebuild(keys, lines);
        } else if (kind === 'insert') {
          lines.splice(at, 0, lines[rng.below(lines.length)]);
          await rebuild(keys, lines);
        } else if (kind === 'reorder') {
          const b = (at + 1 + rng.below(lines.length - 1)) % lines.length;
          [lines[at], lines[b]] = [lines[b], lines[at]];
          await rebuild(keys, lines);
        } else if (kind === 'xdel') await db.redis.xdel(keys.stream, entries[at][0]);
        else if (kind === 'xdel-tail') await db.redis.xdel(keys.stream, ...entries.slice(-1 - rng.below(5)).map(([id]) => id));
        else if (kind === 'checkpoint') await db.redis.del(keys.checkpoint);
        else if (kind === 'appended') {
          // a record appended without the checkpoint (by someone who can seal but not sign)
          for (const line of lines.slice(at, at + 1 + rng.below(3))) await db.redis.xadd(keys.stream, '*', 'r', line);
        }
        const reader = counted(db.redis);
        const paged = await verifyRedisChain(reader, keys, KEY, page);
        const all = await db.redis.xrange(keys.stream, '-', '+');
        const whole = verifyStreamChain(
          keys.stream,
          {
            text: all.map(([, fields]) => `${fields[1]}\n`).join(''),
            ids: all.map(([id]) => id),
            checkpoint: (await db.redis.get(keys.checkpoint)) ?? undefined,
          },
          KEY,
        );
        assert.deepStrictEqual(paged, whole, `seed ${seed} (${kind}, page ${page})`);
        assert.strictEqual(paged.ok, kind === 'none', `seed ${seed} (${kind}): ${paged.firstBad?.reason ?? 'ok'}`);
        assert.ok(
          reader.largestCount <= page && reader.largestAnswer <= page,
          `seed ${seed}: a read asked ${reader.largestCount}`,
        );
        assert.ok(reader.xranges <= Math.ceil(all.length / page) + 1, `seed ${seed}: ${reader.xranges} reads`);
      } finally {
        await db.redis.del(keys.stream, keys.checkpoint);
      }
    }
    assert.strictEqual(seen.size, kinds.length, [...seen].join(', '));
  });

  it('verify while a replica appends: every run reads the chain as it stood, never a checkpoint ahead of its records', async function () {
    this.timeout(120_000);
    const { keys, prefix, id } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let i = 0; i < 100; i++) for (const f of actionFields(i)) await log.append(f);
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'key'), KEY.toString('utf8'));
    let appending = true;
    const appends = (async () => {
      for (let i = 100; appending; i++) for (const f of actionFields(i)) await log.append(f);
    })();
    try {
      for (let run = 0; run < 8; run++) {
        const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            [CLI, 'verify', `${db.harness.url}?prefix=${prefix}&instrument=${id}`, '--key-file', path.join(dir, 'key')],
            { stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          child.on('close', (code) => resolve({ code, out }));
        });
        assert.strictEqual(r.code, 0, `run ${run}: ${r.out}`);
      }
    } finally {
      appending = false;
      await appends;
      await db.redis.del(keys.stream, keys.checkpoint, keys.head);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the command, in a heap smaller than the chain', function () {
    let keys: AuditStreamKeys;
    let prefix: string;
    let id: string;
    let dir: string;
    const run = (...args: string[]): Promise<{ code: number | null; out: string; err: string }> =>
      new Promise((resolve) => {
        // the chain is some 60 MB of records: held whole, it does not fit in 64 MB of heap
        const child = spawn(process.execPath, ['--max-old-space-size=64', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => resolve({ code, out, err }));
      });

    before(async function () {
      this.timeout(120_000);
      ({ keys, prefix, id } = freshStream());
      dir = tempDir();
      const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
      const big = 'x'.repeat(40_000);
      for (let i = 0; i < 1_500; i += 50) {
        const writes: Promise<AuditRecord>[] = [];
        for (let k = i; k < i + 50; k++) {
          const [intent] = actionFields(k);
          if (intent.phase === 'intent') writes.push(log.append({ ...intent, what: { ...intent.what, body: { note: big } } }));
        }
        await Promise.all(writes);
      }
    });
    after(async function () {
      await db.redis.del(keys.stream, keys.checkpoint, keys.head);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('verify checks the whole chain', async function () {
      this.timeout(120_000);
      fs.writeFileSync(path.join(dir, 'key'), KEY.toString('utf8'));
      const r = await run('verify', `${db.harness.url}?prefix=${prefix}&instrument=${id}`, '--key-file', path.join(dir, 'key'));
      assert.strictEqual(r.code, 0, r.out + r.err.slice(0, 2000));
      assert.match(r.out, /OK: 1501 records/);
    });

    it('export writes every record', async function () {
      this.timeout(120_000);
      const out = path.join(dir, 'audit.csv');
      const r = await run('export', `${db.harness.url}?prefix=${prefix}&instrument=${id}`, '--out', out);
      assert.strictEqual(r.code, 0, r.err.slice(0, 2000));
      let rows = 0;
      const text = fs.readFileSync(out, 'utf8');
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) rows++;
      assert.strictEqual(rows, 1 + 1 + 1_500); // header, file record, intents
    });
  });
});
