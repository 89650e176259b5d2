/**
 * Review finding (issue 29, the Redis audit chain after Redis lost records): a stream's checkpoint is written in the
 * same atomic step as every append, so records after it, or a stream without one, were put there by someone who can
 * seal records (no key needed) but not sign a checkpoint: `verify` says TAMPERED. Those two checks ran only while the
 * report was still `ok`, and a declared gap makes it not ok. So anyone with Redis write access and no `lhAudit.key`
 * could append a file record declaring a gap (it needs no key either) and then any records they liked, or delete the
 * checkpoint and rewrite the whole chain behind a gap: `verify` printed INCOMPLETE ("the records around the gap
 * verify", what a lab is told to expect after a Redis restart without persistence), never TAMPERED.
 */
import assert from 'assert';

import { type AuditRecord, type AuditStreamKeys, describeReport, RedisAuditLog, seal } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY, verifiedStream } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: a forged gap in the Redis audit chain hides records added without the key', function () {
  const db = useRedis();

  const verified = (keys: AuditStreamKeys): ReturnType<typeof verifiedStream> => verifiedStream(db.redis, keys);

  /** Writes three actions with the key (as the replicas do); returns the last record. */
  async function genuine(keys: AuditStreamKeys): Promise<AuditRecord> {
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    let last: AuditRecord | undefined;
    for (let i = 1; i <= 3; i++) for (const f of actionFields(i)) last = await log.append(f);
    await log.close();
    return last as AuditRecord;
  }

  /** What someone without the key appends: a file record declaring a gap after `after`, then forged records. */
  async function forge(keys: AuditStreamKeys, after: AuditRecord | null, to: number): Promise<void> {
    const from = after ? after.seq + 1 : 0;
    const gap = { after: after ? { seq: after.seq, hash: after.hash } : null, from, to, reason: 'Redis lost its data' };
    let prev = after ? after.hash : '0'.repeat(64);
    let seq = to;
    const forged: AuditRecord[] = [];
    for (const f of [
      { phase: 'file' as const, at: new Date().toISOString(), instrument: INSTRUMENT, file: 2, gap },
      ...actionFields(99),
    ]) {
      const r = seal(f, ++seq, prev);
      prev = r.hash;
      forged.push(r);
    }
    for (const r of forged) await db.redis.xadd(keys.stream, '*', 'r', JSON.stringify(r));
  }

  it('records appended after the signed checkpoint behind a forged gap are tampering, not a gap', async function () {
    const { keys } = freshStream();
    const last = await genuine(keys);
    assert.strictEqual((await verified(keys)).ok, true, 'the genuine chain verifies');
    await forge(keys, last, last.seq + 3);
    const report = await verified(keys);
    assert.ok(report.firstBad, `verify must say TAMPERED, it says: ${describeReport(report)}`);
    assert.match(describeReport(report), /TAMPERED: .*come after the checkpoint/);
  });

  it('the checkpoint deleted and the chain rewritten behind a forged gap is tampering, not a gap', async function () {
    const { keys } = freshStream();
    const last = await genuine(keys);
    await db.redis.del(keys.stream, keys.checkpoint);
    await forge(keys, null, last.seq);
    const report = await verified(keys);
    assert.ok(report.firstBad, `verify must say TAMPERED, it says: ${describeReport(report)}`);
    assert.match(describeReport(report), /TAMPERED: .*checkpoint is missing/);
  });

  it('a genuine gap (Redis lost its data) still verifies as INCOMPLETE, not TAMPERED', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const [i1, o1] = actionFields(1);
    await log.append(i1);
    await db.redis.del(keys.stream, keys.head, keys.checkpoint);
    await log.append(o1);
    await log.append(actionFields(2)[0]);
    const report = await verified(keys);
    assert.strictEqual(report.firstBad, undefined, report.firstBad?.reason);
    assert.strictEqual(report.gaps.length, 1);
  });
});
