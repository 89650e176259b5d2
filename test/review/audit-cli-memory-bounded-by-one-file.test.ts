/**
 * `lh-audit verify` and `export` read every file of a chain into memory at once (export also every record as an
 * object, and the whole CSV as one string): memory grew with the chain, not with its largest file. A chain of a
 * million records (about 400 MB in 7 files) took 625 MB to verify and 2.3 GB to export; a chain of a few years, or any
 * whose CSV passes V8's longest string (about 512 MB, near two million records), could not be checked or exported at
 * all. Both now hold one file at a time (plus the ids of the intents, to find one appended twice). Shown here with a
 * chain of 91 files of 256 KiB (23 MiB) and a Node.js heap of 24 MiB.
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { AuditLog, type AuditRecord } from '../../src/audit';
import { actionFields, KEY, tempDir } from '../audit/chain-support';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');

function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=24', CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('review: lh-audit verify and export hold one chain file at a time', function () {
  let dir: string;
  before(async function () {
    this.timeout(120_000);
    dir = tempDir();
    const log = new AuditLog({
      dir,
      name: 'chain',
      instrument: 'https://lh.example|',
      key: KEY,
      maxFileBytes: 256 * 1024,
      fsync: false,
    });
    // bodies of 200 bytes: about 650 bytes a record, 48,000 records
    const pad = 'x'.repeat(200);
    for (let i = 0; i < 24_000; i += 500) {
      const writes: Promise<AuditRecord>[] = [];
      for (let j = i; j < i + 500; j++) {
        for (const f of actionFields(j))
          writes.push(log.append(f.phase === 'intent' ? { ...f, what: { ...f.what, body: { pad } } } : f));
      }
      await Promise.all(writes);
    }
    await log.close();
    fs.writeFileSync(path.join(dir, 'key.txt'), `${KEY.toString('utf8')}\n`);
  });
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('verify of a 23 MiB chain with a 24 MiB heap: OK, exit 0', function () {
    this.timeout(120_000);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    assert.ok(files.length > 80, `${files.length} files`);
    const r = lhAudit('verify', path.join(dir, 'chain.000001.jsonl'), '--key-file', path.join(dir, 'key.txt'));
    assert.strictEqual(r.code, 0, r.out + r.err.slice(0, 500));
    assert.match(r.out, new RegExp(`^OK: ${48_000 + files.length} records in ${files.length} file\\(s\\)`));
  });

  it('export of it with a 24 MiB heap, to a file and to stdout: a row per record', function () {
    this.timeout(120_000);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).length;
    const out = path.join(dir, 'audit.csv');
    const r = lhAudit('export', path.join(dir, 'chain.000001.jsonl'), '--out', out);
    assert.strictEqual(r.code, 0, r.err.slice(0, 500));
    const rows = fs.readFileSync(out, 'utf8').split('\n');
    assert.strictEqual(rows.pop(), '');
    assert.strictEqual(rows.length, 1 + 48_000 + files);
    assert.match(rows[0], /^seq,at,phase,/);
    assert.match(rows[rows.length - 1], new RegExp(`^${48_000 + files - 1},`));
    const stdout = lhAudit('export', path.join(dir, 'chain.000001.jsonl'));
    assert.strictEqual(stdout.code, 0, stdout.err.slice(0, 500));
    assert.strictEqual(stdout.out, `${rows.join('\n')}\n`);
  });
});
