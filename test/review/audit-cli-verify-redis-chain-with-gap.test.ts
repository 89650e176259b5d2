/**
 * Review (issue 29, `lh-audit verify` on a Redis chain after Redis lost records): the README says verify prints
 * INCOMPLETE for a declared gap and exits 1, and checks the records around it; a forged gap (records added after the
 * checkpoint by someone without the key) is TAMPERED. The command's own help said exit 1 means "tampered with" only:
 * a lab's scheduled check reading the exit code had no way to learn from the help that 1 is also "records declared
 * missing" (Redis lost its data), the case it now meets after every restart without persistence. Real Redis and the
 * built CLI (nodes/audit/cli.js: `node scripts/build.js` first).
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import path from 'path';

import { RedisAuditLog, seal } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');

describeWithRedis('review: lh-audit verify on a Redis chain with a declared gap', function () {
  const db = useRedis();

  function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  it('exits 1 with INCOMPLETE (not TAMPERED) for a gap, TAMPERED for records added behind a forged one; the help says both', async function () {
    const { prefix, id, keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const [intent, outcome] = actionFields(1);
    await log.append(intent);
    await db.redis.del(keys.stream, keys.head, keys.checkpoint); // Redis lost its data
    const last = await log.append(outcome);
    const url = `${db.harness.url}?prefix=${prefix}&instrument=${id}`;
    const gap = lhAudit('verify', url, '--key', KEY.toString('utf8'));
    assert.strictEqual(gap.code, 1, gap.out + gap.err);
    assert.match(gap.out, /INCOMPLETE: records #0 to #1 are missing/);
    assert.doesNotMatch(gap.out, /TAMPERED/);

    // someone without the key appends a file record declaring a gap, then an intent of their own
    const forgedGap = { after: { seq: last.seq, hash: last.hash }, from: last.seq + 1, to: last.seq + 3, reason: 'x' };
    const g = seal({ phase: 'file', at: last.at, instrument: INSTRUMENT, file: 3, gap: forgedGap }, last.seq + 4, last.hash);
    const r = seal(actionFields(2)[0], g.seq + 1, g.hash);
    for (const rec of [g, r]) await db.redis.xadd(keys.stream, '*', 'r', JSON.stringify(rec));
    const forged = lhAudit('verify', url, '--key', KEY.toString('utf8'));
    assert.strictEqual(forged.code, 1, forged.out + forged.err);
    assert.match(forged.out, /TAMPERED: .*come after the checkpoint/);

    const help = lhAudit('--help');
    assert.match(help.err, /1 when it was tampered with or records are declared missing/);
  });
});
