/**
 * One Node-RED writes a chain per instrument into one folder, every checkpoint signed with the same key (lh-audit.key
 * beside them). Someone with file access who puts the whole chain of instrument B, with its signed checkpoint, under
 * the file names of instrument A's chain (A's own records gone) must not get `OK` (exit 0) for A: the checkpoint
 * signature does not name the instrument, so only the records can tell whose chain it is. Likewise records of another
 * instrument inside one chain (a writer going on in a chain put there from elsewhere).
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import {
  AuditLog,
  type AuditRecord,
  chainFile,
  chainIndexes,
  chainName,
  checkpointFile,
  describeReport,
  hashOf,
  RedisAuditLog,
  sha256Hex,
} from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';
import { actionFields, freshStream, INSTRUMENT, KEY, tempDir, verifiedStream } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
const A = 'https://lh-a.example|https://lh-a.example:8443';
const B = 'https://lh-b.example|https://lh-b.example:8443';

function lhAudit(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** Writes `actions` actions of `instrument` into its chain in `dir`, under the name the package gives it. */
async function write(dir: string, instrument: string, actions: number, from = 0): Promise<string> {
  const name = chainName(instrument, sha256Hex(instrument));
  const log = new AuditLog({ dir, name, instrument, key: KEY, maxFileBytes: 8 * 1024, fsync: false });
  for (let i = from; i < from + actions; i++) {
    for (const f of actionFields(i)) await log.append({ ...f, instrument });
  }
  await log.close();
  return name;
}

describe('review: audit chain of another instrument under this chain name', function () {
  let dir: string;
  let keyFile: string;
  beforeEach(function () {
    dir = tempDir();
    keyFile = path.join(dir, 'lh-audit.key');
    fs.writeFileSync(keyFile, `${KEY.toString('utf8')}\n`);
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("B's whole chain and signed checkpoint under A's names: verify of A names file 1 line 1, exit 1", async function () {
    const a = await write(dir, A, 30);
    const b = await write(dir, B, 40);
    // intact on their own
    assert.strictEqual(lhAudit('verify', chainFile(dir, a, 1), '--key-file', keyFile).code, 0);
    for (const i of chainIndexes(dir, a)) fs.rmSync(chainFile(dir, a, i));
    for (const i of chainIndexes(dir, b)) fs.copyFileSync(chainFile(dir, b, i), chainFile(dir, a, i));
    fs.copyFileSync(checkpointFile(dir, b), checkpointFile(dir, a));

    const r = lhAudit('verify', chainFile(dir, a, 1), '--key-file', keyFile);
    assert.strictEqual(r.code, 1, r.out);
    assert.match(r.out, new RegExp(`TAMPERED: .*${a}\\.000001\\.jsonl line 1 \\(record #0\\): .*${B.replace(/[.|]/g, '\\$&')}`));
  });

  it("a record of another instrument inside A's chain, every hash after it recomputed, no checkpoint: named", async function () {
    const a = await write(dir, A, 10);
    const file = chainFile(dir, a, 1);
    const records = fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord);
    // record #5 says it is of B, sealed anew, the records after it chained on again, the checkpoint deleted
    let prev = records[4].hash;
    const out = records.map((r, i) => {
      if (i < 5) return JSON.stringify(r);
      const sealed = { ...r, prev, ...(i === 5 ? { instrument: B } : {}) };
      sealed.hash = hashOf(sealed);
      prev = sealed.hash;
      return JSON.stringify(sealed);
    });
    fs.writeFileSync(file, out.map((l) => `${l}\n`).join(''));
    for (const i of chainIndexes(dir, a).slice(1)) fs.rmSync(chainFile(dir, a, i));
    fs.rmSync(checkpointFile(dir, a));

    const r = lhAudit('verify', file, '--key-file', keyFile);
    assert.strictEqual(r.code, 1, r.out);
    assert.match(r.out, /TAMPERED: .* line 6 \(record #5\): record #5 is of the instrument "https:\/\/lh-b\.example/);
  });
});

describeWithRedis('review: audit stream of another instrument under this instrument keys', function () {
  const db = useRedis();

  it("B's stream, head and signed checkpoint renamed onto A's keys: verify of A names entry 1", async function () {
    const { prefix, keys } = freshStream(); // INSTRUMENT's
    const k = new CoordinationKeys(prefix).instrument(B);
    const other = { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
    const a = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const b = new RedisAuditLog({ redis: db.redis, keys: other, instrument: B, key: KEY });
    for (let i = 0; i < 3; i++) for (const f of actionFields(i)) await a.append(f);
    for (let i = 0; i < 5; i++) for (const f of actionFields(i)) await b.append({ ...f, instrument: B });
    await a.close();
    await b.close();
    assert.strictEqual((await verifiedStream(db.redis, keys)).ok, true);
    // both in one Redis Cluster slot only with one hash tag: a copy, as someone with write access makes it
    await db.redis.del(keys.stream, keys.head, keys.checkpoint);
    for (const [id, fields] of (await db.redis.xrange(other.stream, '-', '+')) as [string, string[]][]) {
      await db.redis.xadd(keys.stream, id, ...fields);
    }
    await db.redis.set(keys.head, (await db.redis.get(other.head)) as string);
    await db.redis.set(keys.checkpoint, (await db.redis.get(other.checkpoint)) as string);

    const report = await verifiedStream(db.redis, keys);
    assert.strictEqual(report.ok, false, describeReport(report));
    assert.strictEqual(report.firstBad?.line, 1, describeReport(report));
    assert.match(report.firstBad?.reason ?? '', /another instrument/);
  });
});

describeWithRedis('review: audit stream written before 0.4.0 (its id the hash of the instrument as spelled)', function () {
  const db = useRedis();

  it('a chain under the id of a spelling that is not its identity still verifies', async function () {
    const spelled = 'http://localhost:8080/|';
    const id = sha256Hex(spelled).slice(0, 24);
    const k = new CoordinationKeys(freshStream().prefix).instrumentById(id);
    const keys = { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: spelled, key: KEY });
    for (let i = 0; i < 3; i++) for (const f of actionFields(i)) await log.append({ ...f, instrument: spelled });
    await log.close();
    const report = await verifiedStream(db.redis, keys);
    assert.strictEqual(report.ok, true, describeReport(report));
  });
});
