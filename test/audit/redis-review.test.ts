/**
 * The Redis audit chain under attack and under failure (real redis-server): a script call resent after a lost
 * connection, a writer with Redis write access but not the checkpoint key, verify's wording for unsigned chains.
 */
import assert from 'assert';
import Redis from 'ioredis';
import { AuditRedis, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { actionFields, freshStream, INSTRUMENT, KEY } from './chain-support';

describeWithRedis('audit: the Redis chain under attack and failure', function () {
  const db = useRedis();

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
    const log = new RedisAuditLog({ redis, keys, instrument: INSTRUMENT, key: KEY });
    const [intent, outcome] = actionFields(1);
    const r1 = await log.append(intent);
    const r2 = await log.append(outcome);
    assert.deepStrictEqual([r1.seq, r2.seq], [1, 2]);
    const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys), KEY);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.records, 3, 'the opening record, the intent and the outcome, once each');
  });
});
