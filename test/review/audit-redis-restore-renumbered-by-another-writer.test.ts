/**
 * Review finding (issue 29, the Redis audit chain after Redis lost records): a writer declared records lost only
 * when it found the head *below* the highest record it saw. After a restore from an older snapshot (or a FLUSHALL),
 * another writer that had not seen the lost records appends first and numbers its records as the lost ones were:
 * the head is then back at (or above) the first writer's highest, with other records under those numbers. The first
 * writer, whose intent was among the records lost (acknowledged: its request was sent), saw no gap, declared nothing,
 * and appended the intent's outcome: `verify` said TAMPERED ("an outcome without an intent before it") for a chain
 * nobody altered, and the lost intent was declared nowhere. A writer that adopts a head at or above the highest
 * record it saw now reads the chain back to that record's seq: another record there means records were lost and
 * their numbers used again, declared by a file record whose gap has no numbers ("records before #n are missing").
 * The seeded concurrent test found the same with a FLUSHALL (seeds 101, 120, 128 of 100..159). Real Redis.
 */
import assert from 'assert';

import { describeReport, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: a restore renumbered by another writer before the first writes again', function () {
  const db = useRedis();

  it('the outcome of an intent lost with the restore is not taken for tampering, and the loss is declared', async function () {
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
