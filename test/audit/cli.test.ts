/** The documented commands: `lh-audit verify` (exit 0 intact, 1 tampered with the first bad record named, 2 usage) and `lh-audit export`. */
import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { KEY, writeChain } from './chain-support';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');

function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('npx lh-audit', function () {
  let dir: string;
  let first: string;
  let keyFile: string;

  beforeEach(async function () {
    ({ dir } = await writeChain(200, 16 * 1024));
    first = path.join(dir, 'chain.000001.jsonl');
    keyFile = path.join(dir, 'key.txt');
    fs.writeFileSync(keyFile, `${KEY.toString('utf8')}\n`);
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('verify: an intact chain (all its files, from any one of them) exits 0 and says the checkpoint is verified', function () {
    const r = lhAudit('verify', path.join(dir, 'chain.000002.jsonl'), '--key-file', keyFile);
    assert.strictEqual(r.code, 0, r.out + r.err);
    const m = /^OK: (\d+) records in (\d+) file\(s\), last #(\d+)/.exec(r.out);
    assert.ok(m, r.out);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).length;
    assert.ok(files > 1);
    // 200 action records and one file record per file
    assert.deepStrictEqual([Number(m[1]), Number(m[2]), Number(m[3])], [200 + files, files, 200 + files - 1]);
    assert.match(r.out, /checkpoint verified/);
  });

  it('verify: an altered record exits 1 naming its file and line', function () {
    const lines = fs.readFileSync(first, 'utf8').split('\n');
    lines[4] = lines[4].replace(/"at":"[^"]+"/, '"at":"2020-01-01T00:00:00.000Z"');
    fs.writeFileSync(first, lines.join('\n'));
    const r = lhAudit('verify', first, '--key-file', keyFile);
    assert.strictEqual(r.code, 1);
    assert.match(r.out, /TAMPERED: .*chain\.000001\.jsonl line 5 \(record #4\): record #4 was altered/);
  });

  it('verify: with the wrong key the checkpoint fails; without a key it is reported unchecked, exit 3, never OK', function () {
    assert.strictEqual(lhAudit('verify', first, '--key', 'not-the-key').code, 1);
    const r = lhAudit('verify', first);
    assert.strictEqual(r.code, 3, 'intact but not authenticated');
    assert.match(r.out, /^INTACT, NOT AUTHENTICATED: .*no --key or --key-file was given/);
    assert.doesNotMatch(r.out, /OK|verified/);
    assert.match(r.out, /checkpoint unchecked/);
    const json = lhAudit('verify', first, '--json');
    assert.strictEqual(json.code, 3);
    assert.deepStrictEqual(
      [(JSON.parse(json.out) as { ok: boolean }).ok, (JSON.parse(json.out) as { authenticated: boolean }).authenticated],
      [true, false],
    );
    const signed = JSON.parse(lhAudit('verify', first, '--json', '--key-file', keyFile).out) as { authenticated: boolean };
    assert.strictEqual(signed.authenticated, true);
  });

  it('export: CSV with a header and one row per record', function () {
    const out = path.join(dir, 'audit.csv');
    const r = lhAudit('export', first, '--out', out);
    assert.strictEqual(r.code, 0, r.err);
    const rows = fs.readFileSync(out, 'utf8').trim().split('\n');
    assert.match(rows[0], /^seq,at,phase,id,instrument,operation,method,path,who,body,old,why,result,status,reason,hash,prev$/);
    // the whole chain: 200 action records and one file record per file
    assert.strictEqual(rows.length, 1 + 200 + fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).length);
    assert.match(rows[2], /^1,[^,]+,intent,action-0,/);
  });

  it('export of a chain with a line that is not JSON: exit 2 naming the file and line, no CSV, no stack', function () {
    const lines = fs.readFileSync(first, 'utf8').split('\n');
    lines[2] = 'not json';
    fs.writeFileSync(first, lines.join('\n'));
    const r = lhAudit('export', first);
    assert.strictEqual(r.code, 2);
    assert.strictEqual(r.out, '');
    assert.match(r.err, /chain\.000001\.jsonl line 3 is not a JSON record/);
    assert.doesNotMatch(r.err, /\n\s+at /);
  });

  it('usage errors exit 2', function () {
    assert.strictEqual(lhAudit().code, 2);
    assert.strictEqual(lhAudit('verify', path.join(dir, 'missing.000001.jsonl')).code, 2);
  });
});
