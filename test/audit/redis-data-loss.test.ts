/**
 * The Redis audit chain when Redis loses its data (FLUSHALL, a restart without persistence) or comes back from an
 * older snapshot, with intents whose outcomes are still to come (issue 29, chaos seed 2207 found "record #1 is an
 * outcome without an intent before it"): the writer declares the records it saw and Redis lost in a file record
 * that opens a new part of the chain, seqs never go back, and verify reports the gap, never tampering.
 */
import assert from 'assert';

import {
  type AuditRecord,
  type AuditStreamKeys,
  describeReport,
  readStreamChain,
  type RecordFields,
  RedisAuditLog,
} from '../../src/audit';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY, verifiedStream } from './chain-support';

describeWithRedis('audit: the Redis chain after Redis lost its data', function () {
  const db = useRedis();

  const verified = (keys: AuditStreamKeys): ReturnType<typeof verifiedStream> => verifiedStream(db.redis, keys);
  const writer = (keys: AuditStreamKeys): RedisAuditLog =>
    new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
  const flush = (keys: AuditStreamKeys): Promise<number> => db.redis.del(keys.stream, keys.head, keys.checkpoint);

  /** What Redis held at one moment: restoring it is a restart from that snapshot. */
  interface Snapshot {
    entries: [string, string[]][];
    head: string | null;
    checkpoint: string | null;
  }
  const snapshot = async (keys: AuditStreamKeys): Promise<Snapshot> => ({
    entries: (await db.redis.xrange(keys.stream, '-', '+')) as [string, string[]][],
    head: await db.redis.get(keys.head),
    checkpoint: await db.redis.get(keys.checkpoint),
  });
  async function restore(keys: AuditStreamKeys, s: Snapshot): Promise<void> {
    await flush(keys);
    for (const [id, fields] of s.entries) await db.redis.xadd(keys.stream, id, ...fields);
    if (s.head !== null) await db.redis.set(keys.head, s.head);
    if (s.checkpoint !== null) await db.redis.set(keys.checkpoint, s.checkpoint);
  }

  it('FLUSHALL between an intent and its outcome: a new part declares #0 to #1 missing, the outcome follows it', async function () {
    const { keys } = freshStream();
    const log = writer(keys);
    const [intent, outcome] = actionFields(1);
    await log.append(intent);
    await flush(keys);
    const written = await log.append(outcome);
    const report = await verified(keys);
    assert.strictEqual(report.firstBad, undefined, report.firstBad?.reason);
    assert.deepStrictEqual(
      report.gaps.map((g) => [g.from, g.to]),
      [[0, 1]],
    );
    assert.strictEqual(written.seq, 3, 'the seq goes on above the records lost (#2 is the file record)');
    assert.strictEqual(report.ok, false, 'a chain with records missing is never complete');
    assert.match(describeReport(report), /INCOMPLETE: records #0 to #1 are missing.*Redis lost its data/);
  });

  it('an older snapshot restored: the records after it are declared missing, linked to the last one kept', async function () {
    const { keys } = freshStream();
    const log = writer(keys);
    const [i1, o1] = actionFields(1);
    const [i2, o2] = actionFields(2);
    await log.append(i1);
    await log.append(o1);
    const old = await snapshot(keys); // #0 file, #1 intent, #2 outcome
    await log.append(i2); // #3: lost with the snapshot
    await restore(keys, old);
    await log.append(o2);
    const report = await verified(keys);
    assert.strictEqual(report.firstBad, undefined, report.firstBad?.reason);
    assert.deepStrictEqual(
      report.gaps.map((g) => [g.from, g.to]),
      [[3, 3]],
    );
    assert.strictEqual(report.lastSeq, 5);
  });

  it('a second outcome of an intent still in the chain is tampering, also after a gap', async function () {
    const { keys } = freshStream();
    const log = writer(keys);
    const [i1, o1] = actionFields(1);
    await log.append(i1);
    await flush(keys);
    await log.append(o1);
    const [i2, o2] = actionFields(2);
    await log.append(i2);
    await log.append(o2);
    await log.append(o2);
    const report = await verified(keys);
    assert.match(report.firstBad?.reason ?? '', /second outcome of the intent/);
  });

  it('seeded: three writers, losses and old snapshots at random: never tampering, no writer goes back, acknowledged records kept', async function () {
    this.timeout(60000);
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const rng = new Rng(seed);
      const { keys } = freshStream();
      const writers = [writer(keys), writer(keys), writer(keys)];
      const open: string[][] = [[], [], []];
      const saved: Snapshot[] = [];
      let acked: AuditRecord[] = []; // acknowledged since the last loss: must be in the stream
      const last = [-1, -1, -1]; // each writer's last seq: a writer never goes back, whatever Redis lost
      const trail: string[] = [];
      let action = 0;
      for (let step = 0; step < 120; step++) {
        const roll = rng.next();
        if (roll < 0.06) {
          trail.push('flush');
          await flush(keys);
          acked = [];
          continue;
        }
        if (roll < 0.12 && saved.length > 0) {
          trail.push('restore');
          await restore(keys, saved[rng.below(saved.length)]);
          acked = [];
          continue;
        }
        if (roll < 0.2) saved.push(await snapshot(keys));
        const w = rng.below(3);
        let fields: RecordFields;
        if (open[w].length > 0 && rng.next() < 0.5) {
          const id = open[w].splice(rng.below(open[w].length), 1)[0];
          fields = { ...actionFields(Number(id))[1] };
        } else {
          action++;
          open[w].push(String(action));
          fields = actionFields(action)[0];
        }
        trail.push(`w${w} ${fields.phase} ${String((fields as { id: string }).id)}`);
        const record = await writers[w].append(fields);
        acked.push(record);
        assert.ok(record.seq > last[w], `seed ${seed}: w${w} went back to #${record.seq} (${trail.slice(-6).join(', ')})`);
        last[w] = record.seq;
        const report = await verified(keys);
        assert.strictEqual(
          report.firstBad,
          undefined,
          `seed ${seed}: ${report.firstBad?.reason} (${trail.slice(-6).join(', ')})`,
        );
        const inStream = new Set((await readStreamChain(db.redis, keys)).text.split('\n').filter(Boolean));
        for (const r of acked)
          assert.ok(inStream.has(JSON.stringify(r)), `seed ${seed}: record #${r.seq} acknowledged, not in the stream`);
      }
    }
  });
});
