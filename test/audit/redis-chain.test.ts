/**
 * The audit chain shared by several Node-REDs in a Redis stream (real redis-server): writers on separate connections
 * appending at once make one linear chain, nothing lost; a Redis that cannot be reached stops the request before it
 * is sent; `lh-audit verify|export redis://...` check and export it, never printing the password.
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import Redis from 'ioredis';

import { AuditRecord, AuditStreamKeys, AuditTrail, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { useClients } from '../support/client-suite';
import { describeWithRedis, RedisHarness, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY, tempDir } from './chain-support';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describeWithRedis('audit: one chain per instrument in a Redis stream, shared by replicas', function () {
  const db = useRedis();

  it('writers on separate connections appending at once make one linear chain: verify ok, every record there once', async function () {
    this.timeout(120_000);
    const { keys } = freshStream();
    const connections = Array.from({ length: 4 }, () => new Redis(db.harness.url));
    try {
      const logs = connections.map((redis) => new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY }));
      const acked: AuditRecord[] = [];
      // each writer appends actions in bursts (its own batches), interleaved with the others
      await Promise.all(
        logs.map(async (log, w) => {
          for (let burst = 0; burst < 25; burst++) {
            const writes: Promise<AuditRecord>[] = [];
            for (let i = 0; i < 5; i++) {
              for (const f of actionFields(w * 10_000 + burst * 10 + i)) writes.push(log.append(f));
            }
            acked.push(...(await Promise.all(writes)));
          }
        }),
      );
      await Promise.all(logs.map((l) => l.close()));
      const chain = await readStreamChain(db.redis, keys);
      const report = verifyStreamChain(keys.stream, chain, KEY);
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
      assert.strictEqual(report.checkpoint, 'verified');
      // 4 writers × 125 actions × 2 records, plus the chain's opening record: nothing lost, nothing twice
      assert.strictEqual(report.records, 1001);
      assert.strictEqual(acked.length, 1000);
      const seqs = acked.map((r) => r.seq).sort((a, b) => a - b);
      assert.deepStrictEqual(
        seqs,
        Array.from({ length: 1000 }, (_, i) => i + 1),
        'every acknowledged record has its own place',
      );
      const stored = chain.text.trim().split('\n');
      for (const r of acked) assert.strictEqual(stored[r.seq], JSON.stringify(r), `record #${r.seq} is stored as acknowledged`);
      assert.deepStrictEqual(report.openIntents, []);
    } finally {
      for (const c of connections) c.disconnect();
    }
  });

  it('a writer whose view of the head is stale (another replica appended) chains on the new head, never forks', async function () {
    const { keys } = freshStream();
    const a = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const other = new Redis(db.harness.url);
    try {
      const b = new RedisAuditLog({ redis: other, keys, instrument: INSTRUMENT, key: KEY });
      // distinct records (each intent has its own random id): a byte-identical record sealed on the same head is the
      // same record, which a resent script call finds already appended
      const r1 = await a.append(actionFields(1)[0]);
      const r2 = await b.append(actionFields(2)[0]);
      const r3 = await a.append(actionFields(3)[0]); // a still believes r1 is the head
      assert.deepStrictEqual([r1.seq, r2.seq, r3.seq], [1, 2, 3]);
      assert.strictEqual(r2.prev, r1.hash);
      assert.strictEqual(r3.prev, r2.hash);
      const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
    } finally {
      other.disconnect();
    }
  });

  it('records deleted from the end and writing continued: verify finds the gap (the head is not the stream)', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let i = 0; i < 5; i++) for (const f of actionFields(i)) await log.append(f);
    const last = (await db.redis.xrevrange(keys.stream, '+', '-', 'COUNT', 2)).map(([id]) => id);
    await db.redis.xdel(keys.stream, ...last);
    for (const f of actionFields(99)) await log.append(f);
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.strictEqual(report.ok, false);
    assert.match(report.firstBad?.reason ?? '', /does not follow record #8/);
  });

  it('redisWaitReplicas: a record the Redis replicas asked for did not acknowledge in time fails (the request would not be sent)', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({
      redis: db.redis,
      keys,
      instrument: INSTRUMENT,
      key: KEY,
      waitReplicas: 1,
      waitTimeoutMs: 100,
    });
    await assert.rejects(
      log.append(actionFields(1)[0]),
      /only 0 of the 1 Redis replicas asked for \(lhAudit.redisWaitReplicas\) acknowledged within 100 ms/,
    );
    // the next append tries again: the chain stays one chain
    const other = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    await other.append(actionFields(2)[0]);
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
  });

  describe('Redis unreachable', function () {
    const suite = useClients();

    it('the request is not sent, and the error says the audit record could not be written to Redis', async function () {
      const down = new RedisHarness();
      await down.start();
      const { keys } = freshStream();
      const redis = new Redis(down.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
      redis.on('error', () => undefined);
      await new Promise((resolve) => redis.once('ready', resolve));
      await down.destroy();
      await new Promise((resolve) => setImmediate(resolve));
      const trail = new AuditTrail(new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY }), {
        instrument: INSTRUMENT,
      });
      const c = suite.unmanaged({ audit: trail });
      try {
        await c.session.token();
        suite.sim.clearRequests();
        await assert.rejects(
          c.prep.clearErrors(),
          /clear-errors was not sent: its audit record could not be written \(the audit trail cannot be written to Redis/,
        );
        assert.deepStrictEqual(
          suite.sim.requests.filter((r) => r.method !== 'GET' && r.method !== 'DELETE'),
          [],
          'nothing reached the instrument',
        );
      } finally {
        await c.close();
        redis.disconnect();
      }
    });
  });

  describe('npx lh-audit verify|export redis://...', function () {
    let keys: AuditStreamKeys;
    let prefix: string;
    let id: string;
    let keyFile: string;
    let dir: string;

    beforeEach(async function () {
      ({ keys, prefix, id } = freshStream());
      const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => actionFields(i))
          .flat()
          .map((f) => log.append(f)),
      );
      dir = tempDir();
      keyFile = path.join(dir, 'key.txt');
      fs.writeFileSync(keyFile, `${KEY.toString('utf8')}\n`);
    });
    afterEach(function () {
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('verify: an intact stream exits 0 (named by id, by identity, or every chain under the prefix)', function () {
      for (const which of [`&instrument=${id}`, `&instrument=${encodeURIComponent(INSTRUMENT)}`, '']) {
        const r = lhAudit('verify', `${db.harness.url}/0?prefix=${prefix}${which}`, '--key-file', keyFile);
        assert.strictEqual(r.code, 0, which + r.out + r.err);
        assert.match(r.out, /OK: 41 records in 1 file\(s\), last #40/);
        assert.match(r.out, /checkpoint verified/);
        assert.ok(r.out.includes(keys.stream), r.out);
      }
    });

    it('verify: an altered record exits 1 naming its stream entry', async function () {
      const entries = await db.redis.xrange(keys.stream, '-', '+');
      const [victimId, fields] = entries[7];
      const altered = fields[1].replace(/"at":"[^"]+"/, '"at":"2020-01-01T00:00:00.000Z"');
      await db.redis.del(keys.stream);
      for (const [eid, f] of entries) await db.redis.xadd(keys.stream, eid, 'r', eid === victimId ? altered : f[1]);
      const r = lhAudit('verify', `${db.harness.url}?prefix=${prefix}&instrument=${id}`, '--key-file', keyFile);
      assert.strictEqual(r.code, 1, r.out + r.err);
      assert.ok(r.out.includes(`TAMPERED: ${keys.stream} entry ${victimId} line 8 (record #7): record #7 was altered`), r.out);
    });

    it('export: CSV of the stream, one row per record', function () {
      const r = lhAudit('export', `${db.harness.url}?prefix=${prefix}&instrument=${id}`);
      assert.strictEqual(r.code, 0, r.err);
      const lines = r.out.trim().split('\n');
      assert.strictEqual(lines.length, 1 + 41);
      assert.match(lines[0], /^seq,at,phase,id,instrument,operation/);
    });

    it('a password in the URL is used and never printed, also when the connection fails', function () {
      const r = lhAudit('verify', `redis://:Sup3rS3cret@127.0.0.1:1/0?prefix=${prefix}`);
      assert.strictEqual(r.code, 2);
      assert.ok(!`${r.out}${r.err}`.includes('Sup3rS3cret'), r.err);
      assert.match(r.err, /127\.0\.0\.1/);
    });

    it('no chain under the prefix: exit 2 saying so', function () {
      const r = lhAudit('verify', `${db.harness.url}?prefix=nothing-here-${process.pid}`);
      assert.strictEqual(r.code, 2);
      assert.match(r.err, /no audit chain under the prefix/);
    });
  });
});
