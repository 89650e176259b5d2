/**
 * Review finding (issue 29, the Redis audit chain after Redis lost records): records appended after a stream's
 * checkpoint are tampering, and the README promises the bad record is named by its stream entry id. The first one was
 * located as line `checkpoint seq + 2` and the records before it counted as `seq + 1`, true only of a chain numbered
 * from #0 without a gap. In a chain with a declared gap (Redis lost its data: the chain goes on above the records
 * lost) the report named no entry, or another one, and a wrong count of records verifying; and a gap declared by a
 * record among those added after the checkpoint was still printed as INCOMPLETE, "the records around the gap
 * verify". Real Redis.
 */
import assert from 'assert';

import {
  type AuditRecord,
  type AuditStreamKeys,
  describeReport,
  readStreamChain,
  RedisAuditLog,
  seal,
  verifyStreamChain,
} from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: tampering after a declared gap in the Redis audit chain', function () {
  const db = useRedis();

  /** A chain that lost its first records (a FLUSHALL between two appends): a gap, then 4 records after it. */
  async function gapped(keys: AuditStreamKeys): Promise<AuditRecord> {
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (const f of actionFields(1)) await log.append(f);
    await db.redis.del(keys.stream, keys.head, keys.checkpoint);
    let last: AuditRecord | undefined;
    for (const f of actionFields(2)) last = await log.append(f);
    for (const f of actionFields(3)) last = await log.append(f);
    return last as AuditRecord;
  }

  /** Records sealed onto `after` by someone without the key (no checkpoint written): their stream entry ids. */
  async function append(keys: AuditStreamKeys, after: AuditRecord, fields: Parameters<typeof seal>[0][]): Promise<string[]> {
    let prev = after;
    const ids: string[] = [];
    for (const f of fields) {
      prev = seal(f, prev.seq + 1, prev.hash);
      ids.push(String(await db.redis.xadd(keys.stream, '*', 'r', JSON.stringify(prev))));
    }
    return ids;
  }

  it('records added after the checkpoint: the first is named by its entry id, the records before it counted', async function () {
    const { keys } = freshStream();
    const last = await gapped(keys);
    const lines = (await readStreamChain(db.redis, keys)).ids.length;
    const [first] = await append(keys, last, actionFields(9));
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.strictEqual(report.firstBadEntry, first, describeReport(report));
    assert.strictEqual(report.records, lines, 'every record up to the checkpoint verifies');
    assert.match(
      describeReport(report),
      new RegExp(`TAMPERED: .*entry ${first} line ${lines + 1} \\(record #${last.seq + 1}\\)`),
    );
  });

  it('a gap declared after the checkpoint is not reported as records missing around which the chain verifies', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    let last: AuditRecord | undefined;
    for (const f of actionFields(1)) last = await log.append(f);
    const genuine = last as AuditRecord;
    const gap = { after: { seq: genuine.seq, hash: genuine.hash }, from: genuine.seq + 1, to: genuine.seq + 5, reason: 'forged' };
    const fileRecord = seal({ phase: 'file', at: genuine.at, instrument: INSTRUMENT, file: 2, gap }, gap.to + 1, genuine.hash);
    await db.redis.xadd(keys.stream, '*', 'r', JSON.stringify(fileRecord));
    await append(keys, fileRecord, actionFields(9));
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.ok(report.firstBad, describeReport(report));
    assert.doesNotMatch(describeReport(report), /INCOMPLETE/);
    assert.deepStrictEqual(report.gaps, []);
  });
});
