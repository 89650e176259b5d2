/**
 * Review finding (issue 29, the audit chain after records were lost): `lh-audit export` is what a lab hands a reviewer
 * (§11.10(e), "CSV export"); after Redis lost its data (or a chain file was deleted) the chain holds a file record
 * declaring records #X to #Y missing, and `verify` prints INCOMPLETE for it. The CSV kept only the record's seq, time,
 * phase and hashes: a reader of the export saw numbers jump and nothing saying records were lost, or why. The file
 * record's row now says which records are missing and why, in its `reason` cell. Real Redis (the export of a stream
 * reads it as `lh-audit export` does).
 */
import assert from 'assert';

import { readStreamChain, RedisAuditLog, streamRecords, toCsv } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: the CSV export of a chain with records declared missing', function () {
  const db = useRedis();

  it("says which records are missing and why, in the file record's row", async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const [intent, outcome] = actionFields(1);
    await log.append(intent);
    await db.redis.del(keys.stream, keys.head, keys.checkpoint); // Redis lost its data
    await log.append(outcome);
    const csv = toCsv(streamRecords(await readStreamChain(db.redis, keys)));
    const lines = csv.trim().split('\n');
    const header = lines[0].split(',');
    const row = lines.find((l) => l.split(',')[header.indexOf('phase')] === 'file') ?? '';
    assert.match(row, /records #0 to #1 are missing/, `the file record's row: ${row}`);
    assert.match(row, /Redis lost its data/);
  });
});
