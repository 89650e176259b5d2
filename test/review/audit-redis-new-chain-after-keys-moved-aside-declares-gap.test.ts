/**
 * Review finding (issue 29, the Redis audit chain after Redis lost records): the README's way out of an altered chain
 * is "an administrator moves the chain's three keys aside (RENAME, for the investigation); a new chain then begins".
 * Since a writer that finds the head below the highest record it saw declares the records missing, a replica still
 * running when the keys were moved aside opened the new chain with a file record declaring every record of the old
 * chain missing "(Redis lost its data, or was restored from an older snapshot)": the new chain could never verify
 * (INCOMPLETE, exit 1, on every scheduled check) and said something false about Redis. A writer that found the chain
 * altered (and refused to write on it) begins the next empty chain as a new one. Real Redis.
 */
import assert from 'assert';

import { type AuditStreamKeys, describeReport, RedisAuditLog } from '../../src/audit';
import { actionFields, freshStream, INSTRUMENT, KEY, verifiedStream } from '../audit/chain-support';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: a new audit chain after the altered one was moved aside', function () {
  const db = useRedis();

  const verified = (keys: AuditStreamKeys): ReturnType<typeof verifiedStream> => verifiedStream(db.redis, keys);

  it('begins at #0 and verifies, written by a replica that kept running', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let i = 1; i <= 3; i++) for (const f of actionFields(i)) await log.append(f);
    // someone without the key moves the head: the replica refuses to chain on it
    await db.redis.set(keys.head, `99 ${'f'.repeat(64)}`);
    await assert.rejects(log.append(actionFields(4)[0]), /the audit chain in Redis was altered/);
    // the administrator moves the three keys aside for the investigation
    for (const key of [keys.stream, keys.head, keys.checkpoint]) await db.redis.rename(key, `${key}:altered`);
    const first = await log.append(actionFields(5)[0]);
    assert.strictEqual(first.seq, 1, 'a new chain: its file record, then this intent');
    const report = await verified(keys);
    assert.deepStrictEqual([report.ok, report.gaps.length], [true, 0], describeReport(report));
  });

  it('begun by another replica first: the replica that refused the old chain joins the new one, declaring nothing', async function () {
    const { keys } = freshStream();
    const one = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const two = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let i = 1; i <= 3; i++) for (const f of actionFields(i)) await one.append(f);
    await db.redis.set(keys.head, `99 ${'f'.repeat(64)}`);
    await assert.rejects(one.append(actionFields(4)[0]), /the audit chain in Redis was altered/);
    for (const key of [keys.stream, keys.head, keys.checkpoint]) await db.redis.rename(key, `${key}:altered`);
    await two.append(actionFields(5)[0]); // the other replica (which never wrote) begins the new chain
    await one.append(actionFields(6)[0]);
    const report = await verified(keys);
    assert.deepStrictEqual([report.ok, report.gaps.length], [true, 0], describeReport(report));
  });

  it('a chain emptied without an alteration seen before (Redis lost its data) still declares the gap', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (let i = 1; i <= 2; i++) for (const f of actionFields(i)) await log.append(f);
    await db.redis.del(keys.stream, keys.head, keys.checkpoint);
    await log.append(actionFields(3)[0]);
    const report = await verified(keys);
    assert.deepStrictEqual(
      report.gaps.map((g) => [g.from, g.to]),
      [[0, 4]],
    );
  });
});
