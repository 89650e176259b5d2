/**
 * The Redis audit chain under attack and under failure (real redis-server): a script call resent after a lost
 * connection, a writer with Redis write access but not the checkpoint key, verify's wording for unsigned chains.
 */
import assert from 'assert';

import {
  AuditChains,
  AuditRecord,
  AuditRedis,
  AuditStreamKeys,
  checkpointMac,
  COMPARE_AND_APPEND,
  READ_HEAD,
  RedisAuditLog,
  seal,
  verifyStreamChain,
} from '../../src/audit';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY, verifiedStream } from './chain-support';

describeWithRedis('audit: the Redis chain under attack and failure', function () {
  const db = useRedis();

  type StreamReport = ReturnType<typeof verifyStreamChain>;

  /** The chain `keys` as verify reads it from Redis, checked with `key`. */
  const verified = (keys: AuditStreamKeys, key = KEY): Promise<StreamReport> => verifiedStream(db.redis, keys, key);

  /** One action (intent, outcome) appended through `redis` to the fresh chain `keys`: seqs 1 and 2, the chain verifies. */
  async function appendOneActionThrough(redis: AuditRedis, keys: AuditStreamKeys): Promise<StreamReport> {
    const log = new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY });
    const [intent, outcome] = actionFields(1);
    const r1 = await log.append(intent);
    const r2 = await log.append(outcome);
    assert.deepStrictEqual([r1.seq, r2.seq], [1, 2]);
    const report = await verified(keys);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    return report;
  }

  it('a script call that ran but whose reply was lost, resent by the client (reconnect), is not appended twice', async function () {
    const { keys } = freshStream();
    let resend = true;
    // ioredis resends a command in flight when the connection drops (autoResendUnfulfilledCommands): the script ran,
    // its reply was lost, and the resent call finds the head it set itself
    const redis: AuditRedis = {
      get: (key) => db.redis.get(key),
      async eval(script, numKeys, ...args) {
        if (resend) {
          resend = false;
          await db.redis.eval(script, numKeys, ...args);
        }
        return db.redis.eval(script, numKeys, ...args);
      },
    };
    const report = await appendOneActionThrough(redis, keys);
    assert.strictEqual(report.records, 3, 'the opening record, the intent and the outcome, once each');
  });

  it('a script call that timed out here but ran in Redis counts as appended: no intent left without its request', async function () {
    const { keys } = freshStream();
    let timeouts = 1;
    const redis: AuditRedis = {
      get: (key) => db.redis.get(key),
      async eval(script, numKeys, ...args) {
        const reply = await db.redis.eval(script, numKeys, ...args);
        if (script === COMPARE_AND_APPEND && timeouts-- > 0) throw new Error('Command timed out');
        return reply;
      },
    };
    const report = await appendOneActionThrough(redis, keys);
    assert.strictEqual(report.records, 3);
  });

  it('a script call that timed out and did not run still fails the append (the request is not sent)', async function () {
    const { keys } = freshStream();
    const redis: AuditRedis = {
      get: (key) => db.redis.get(key),
      eval: () => Promise.reject(new Error('Command timed out')),
    };
    const log = new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY });
    await assert.rejects(log.append(actionFields(1)[0]), /cannot be written to Redis \(Command timed out\)/);
  });

  it("a writer's first read of head and checkpoint is one atomic step: another replica appending between them is no alarm", async function () {
    const { keys } = freshStream();
    const other = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    await other.append(actionFields(1)[0]);
    let between: (() => void) | undefined;
    const headRead = new Promise<void>((resolve) => (between = resolve));
    const redis: AuditRedis = {
      async eval(script, numKeys, ...args) {
        const reply = await db.redis.eval(script, numKeys, ...args);
        if (script === READ_HEAD) await other.append(actionFields(2)[0]); // right after the read: the compare then fails
        return reply;
      },
      async get(key) {
        if (key === keys.checkpoint) await headRead; // the other replica appends between the two reads
        const value = await db.redis.get(key);
        if (key === keys.head) {
          await other.append(actionFields(2)[0]);
          between?.();
        }
        return value;
      },
    };
    const log = new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY });
    const record = await log.append(actionFields(3)[0]);
    assert.strictEqual(record.seq, 3);
    const report = await verified(keys);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
  });

  /** The attacker: Redis write access, no key. Seals records of its own on the tail and moves the head (and, unsigned, the checkpoint). */
  async function forgeTail(keys: AuditStreamKeys, checkpoint: 'keep' | 'unsigned' | 'bad-mac'): Promise<string> {
    const entries = await db.redis.xrange(keys.stream, '-', '+');
    const last = JSON.parse(entries[entries.length - 1][1][1]) as AuditRecord;
    const forged = seal(actionFields(666)[0], last.seq + 1, last.hash);
    const id = await db.redis.xadd(keys.stream, '*', 'r', JSON.stringify(forged));
    await db.redis.set(keys.head, `${forged.seq} ${forged.hash}`);
    const cp = { seq: forged.seq, hash: forged.hash, file: 1, at: forged.at };
    if (checkpoint === 'unsigned') await db.redis.set(keys.checkpoint, JSON.stringify(cp));
    if (checkpoint === 'bad-mac') await db.redis.set(keys.checkpoint, JSON.stringify({ ...cp, mac: 'f'.repeat(64) }));
    return id ?? '';
  }

  for (const checkpoint of ['keep', 'unsigned', 'bad-mac'] as const) {
    it(`records sealed into the stream without the key (checkpoint ${checkpoint}) are not signed into the chain by the next append`, async function () {
      const { keys } = freshStream();
      const a = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
      for (const f of actionFields(1)) await a.append(f);
      const forgedId = await forgeTail(keys, checkpoint);
      // a writer that knew the old head (its compare fails) and one that reads the head afresh
      const fresh = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
      for (const log of [a, fresh]) {
        await assert.rejects(log.append(actionFields(2)[0]), /the audit chain in Redis was altered \(.*\); run lh-audit verify/);
      }
      const report = await verified(keys);
      assert.strictEqual(report.ok, false);
      if (checkpoint === 'keep') assert.strictEqual(report.firstBadEntry, forgedId);
    });
  }

  it('head and checkpoint deleted (the stream left): no new chain is begun in the old stream', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    for (const f of actionFields(1)) await log.append(f);
    await db.redis.del(keys.head, keys.checkpoint);
    const fresh = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    await assert.rejects(fresh.append(actionFields(2)[0]), /altered \(its head is gone but its stream has records\)/);
    assert.strictEqual(await db.redis.xlen(keys.stream), 3, 'nothing appended');
  });

  it('a replica with another key does not chain on (nor sign over) the chain: it says the key differs', async function () {
    const { keys } = freshStream();
    await new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY }).append(actionFields(1)[0]);
    const other = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: Buffer.from('another key') });
    await assert.rejects(other.append(actionFields(2)[0]), /not signed with this Node-RED's lhAudit.key/);
    const report = await verified(keys);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
  });

  it('a replica without a key does not write unsigned checkpoints over a signed chain: it says the key is missing', async function () {
    const { keys } = freshStream();
    await new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY }).append(actionFields(1)[0]);
    const keyless = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT });
    await assert.rejects(keyless.append(actionFields(2)[0]), /is signed, but this Node-RED has no lhAudit.key/);
    const report = await verified(keys);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.checkpoint, 'verified');
  });

  it('the tail cut and an older signed checkpoint put back (a replay): a running writer says the chain went back', async function () {
    const { keys } = freshStream();
    const log = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY });
    const warnings: string[] = [];
    log.on('warning', (text: string) => warnings.push(text));
    for (const f of actionFields(1)) await log.append(f);
    const oldHead = await db.redis.get(keys.head);
    const oldCheckpoint = await db.redis.get(keys.checkpoint);
    for (const f of actionFields(2)) await log.append(f);
    // the attacker cuts records #3 and #4 and puts the signed checkpoint of #2 back: verify alone cannot see it
    const entries = await db.redis.xrange(keys.stream, '-', '+');
    await db.redis.xdel(keys.stream, entries[3][0], entries[4][0]);
    await db.redis.set(keys.head, oldHead ?? '');
    await db.redis.set(keys.checkpoint, oldCheckpoint ?? '');
    const replayed = await verified(keys);
    assert.strictEqual(replayed.ok, true, 'undetectable from Redis alone: documented in the README');
    await log.append(actionFields(3)[0]);
    assert.strictEqual(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], /went back from record #4 to #2: records were removed/);
  });

  it('a key rotation: a replica given the new key and lhAudit.previousKey chains on, the chain verifies with the new key', async function () {
    const { keys } = freshStream();
    await new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY }).append(actionFields(1)[0]);
    const next = Buffer.from('the next key');
    const rotated = new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: next, previousKeys: [KEY] });
    await rotated.append(actionFields(2)[0]);
    const report = await verified(keys, next);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.checkpoint, 'verified');
  });

  it('settings.js lhAudit.previousKey reaches the writer, and its warnings reach the lh-server log', async function () {
    const { keys } = freshStream();
    await new RedisAuditLog({ redis: db.redis, keys, instrument: INSTRUMENT, key: KEY }).append(actionFields(1)[0]);
    const warnings: string[] = [];
    const use = new AuditChains().useRedis(
      { key: 'the next key', previousKey: KEY.toString('utf8') },
      db.redis,
      keys,
      INSTRUMENT,
      { node: 'n1' },
      undefined,
      (text) => warnings.push(text),
    );
    assert.ok(use);
    try {
      await use.trail.log.append(actionFields(2)[0]);
      // the head put back to the first record (its old checkpoint with it): the writer saw #2, now #1
      const entries = await db.redis.xrange(keys.stream, '-', '+');
      await db.redis.xdel(keys.stream, entries[2][0]);
      const first = JSON.parse(entries[1][1][1]) as AuditRecord;
      const cp = { seq: first.seq, hash: first.hash, file: 1, at: first.at };
      await db.redis.set(keys.head, `${first.seq} ${first.hash}`);
      await db.redis.set(keys.checkpoint, JSON.stringify({ ...cp, mac: checkpointMac(KEY, cp) }));
      await use.trail.log.append(actionFields(3)[0]);
      assert.deepStrictEqual(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /went back from record #2 to #1/);
    } finally {
      await use.release();
    }
  });
});
