/**
 * Review finding (issue 29, the Redis audit chain after Redis lost records), not fixed: a writer declares records lost
 * when it finds the head *below* the highest record it saw. After a restore from an older snapshot, another writer that
 * had not seen the lost records appends first and numbers its records as the lost ones were: the head is then back at
 * (or above) the first writer's highest, with other records under those numbers. The first writer, whose intent was
 * among the records lost (acknowledged: its request was sent), sees no gap, declares nothing, and appends the
 * intent's outcome: `verify` says TAMPERED ("an outcome without an intent before it") for a chain nobody tampered
 * with, and the lost intent is declared nowhere. Telling it needs the writer to check that the chain in Redis still
 * holds its own last record (the hash at its seq) when it adopts another writer's head, and a declared gap whose
 * numbers were reused since, which verify does not accept yet: left as a skipped test for the lead. Real Redis.
 */
import assert from 'assert';

import { describeReport, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: a restore renumbered by another writer before the first writes again', function () {
  const db = useRedis();

  it.skip('the outcome of an intent lost with the restore is not taken for tampering (not fixed)', async function () {
    const { keys } = freshStream();
    const w1 = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const w2 = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (const f of actionFields(1)) await w1.append(f);
    for (const f of actionFields(2)) await w2.append(f); // both know the head (#4)
    const saved = {
      entries: (await db.redis.xrange(keys.stream, '-', '+')) as [string, string[]][],
      head: await db.redis.get(keys.head),
      checkpoint: await db.redis.get(keys.checkpoint),
    };
    const [intent, outcome] = actionFields(3);
    await w1.append(intent); // #5, acknowledged: w1 sends its request
    // Redis comes back from the snapshot taken before it
    await db.redis.del(keys.stream, keys.head, keys.checkpoint);
    for (const [id, fields] of saved.entries) await db.redis.xadd(keys.stream, id, ...fields);
    await db.redis.set(keys.head, saved.head as string);
    await db.redis.set(keys.checkpoint, saved.checkpoint as string);
    await w2.append(actionFields(4)[0]); // w2 had not seen #5: its record is the new #5
    await w1.append(outcome);
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.strictEqual(report.firstBad, undefined, describeReport(report));
    assert.ok(report.gaps.length > 0, 'the lost intent is declared missing');
  });
});
