/**
 * Review finding (fix86, item 5): `lh-audit verify` of a chain in Redis.
 * - A key of the chain holding another type (a stream replaced by a string, a checkpoint by a list: someone able to
 *   write Redis, or a prefix shared by mistake) made verify exit 2 with Redis' bare "WRONGTYPE Operation against a
 *   key holding the wrong kind of value": which key, of which chain, was not said. Now the error names the key and
 *   what it should hold.
 * - A stream emptied (its entries trimmed or deleted) while its signed checkpoint stayed was reported TAMPERED, but its
 *   summary said "checkpoint absent", the opposite of what was found. Now it says the checkpoint is there and names
 *   records the stream no longer holds.
 * Real Redis, the built CLI (nodes/audit/cli.js: `node scripts/build.js` first).
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import path from 'path';

import { RedisAuditLog } from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';
import { actionFields, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
const INSTRUMENT = 'https://lh-0.example|';

describeWithRedis('review: lh-audit verify names a wrong-type key and an emptied stream', function () {
  this.timeout(30000);
  const db = useRedis();
  let n = 0;

  function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  async function chain(): Promise<{ url: string; stream: string; head: string; checkpoint: string }> {
    const prefix = `lh-audit-type-${process.pid}-${++n}`;
    const k = new CoordinationKeys(prefix).instrument(INSTRUMENT);
    const keys = { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let a = 1; a <= 2; a++) for (const fields of actionFields(a)) await log.append({ ...fields, instrument: INSTRUMENT });
    await log.close();
    return { url: `${db.harness.url}?prefix=${prefix}`, ...keys };
  }

  for (const which of ['stream', 'checkpoint'] as const)
    it(`the ${which} key holding another type: exit 2, the error names that key`, async function () {
      const c = await chain();
      await db.redis.del(c[which]);
      if (which === 'checkpoint') await db.redis.rpush(c[which], 'x');
      else await db.redis.set(c[which], 'x');
      const r = lhAudit('verify', c.url, '--key', KEY.toString('utf8'));
      assert.strictEqual(r.code, 2, `${r.out}${r.err}`);
      assert.ok(r.err.includes(c[which]), `names ${c[which]}: ${r.err}`);
      assert.match(r.err, /holds a (string|list)/, r.err);
    });

  it('an emptied stream whose checkpoint stays: TAMPERED, saying the checkpoint is there, not "absent"', async function () {
    const c = await chain();
    await db.redis.xtrim(c.stream, 'MAXLEN', 0);
    const r = lhAudit('verify', c.url, '--key', KEY.toString('utf8'));
    assert.strictEqual(r.code, 1, `${r.out}${r.err}`);
    assert.match(r.out, /TAMPERED/);
    assert.doesNotMatch(r.out, /checkpoint absent|there is no checkpoint/, r.out);
    assert.match(r.out, /empty but its checkpoint \(verified\) names records up to #4: they were removed/, r.out);
    assert.match(r.out, /checkpoint verified/, r.out);
    const json = JSON.parse(lhAudit('verify', c.url, '--key', KEY.toString('utf8'), '--json').out) as { checkpoint: string };
    assert.strictEqual(json.checkpoint, 'verified');
  });
});
