/**
 * Redis Cluster runs a script only when every key it names lives in one hash slot. Every script of the coordination
 * is run here through the stores, leases and coordinator on a real Redis, recording the keys of each call: each call's
 * keys must hash to one slot (the instrument's hash tag, or the one global key), and every script must be covered.
 */
import assert from 'assert';

import { ApplyLocks } from '../../src/coordination/apply-locks';
import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { Leases } from '../../src/coordination/leases';
import * as scripts from '../../src/coordination/scripts';
import { SharedValue } from '../../src/coordination/shared-memory';
import {
  registrationUsers,
  SharedDefaults,
  SharedLedger,
  SharedOnce,
  sharedSecret,
  SharedSeen,
  StoreRedis,
} from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';

/** Redis Cluster's hash slot of a key: CRC16 (XModem) of its hash tag (the part in the first {…}, when not empty) mod 16384. */
function calculateSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = Buffer.from(close > open + 1 ? key.slice(open + 1, close) : key);
  let crc = 0;
  for (const byte of hashed) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

interface Call {
  script: string;
  keys: string[];
}

/** The real client, recording the keys of every script it runs. */
function recording(redis: StoreRedis, calls: Call[]): StoreRedis {
  return new Proxy(redis, {
    get(target, prop, receiver) {
      if (prop === 'eval') {
        return (script: string, numKeys: number, ...args: (string | number)[]) => {
          calls.push({ script, keys: args.slice(0, numKeys).map(String) });
          return target.eval(script, numKeys, ...args);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describeWithRedis('coordination: Redis Cluster hash slots', function () {
  const db = useRedis();

  it('the slot function is Redis Cluster’s (its documented examples)', function () {
    assert.equal(calculateSlot('123456789'), 0x31c3 % 16384); // CRC16/XMODEM check value
    assert.equal(calculateSlot('{user1000}.following'), calculateSlot('{user1000}.followers'));
    assert.equal(calculateSlot('foo{bar}{zap}'), calculateSlot('bar'));
  });

  it('every script names keys of one hash slot only, and every script of scripts.ts is run here', async function () {
    const calls: Call[] = [];
    const redis = recording(db.redis as unknown as StoreRedis, calls);
    const keys = new CoordinationKeys(`lh-slots-${process.pid}`);
    const k = keys.instrument('http://sim.example|https://sim.example:8443');
    const leases = new Leases(redis, keys);

    const grant = await leases.acquire('http://sim.example|https://sim.example:8443', 'a', 30000);
    await leases.renew('http://sim.example|https://sim.example:8443', grant.value, 30000);
    await leases.heartbeat('a', 30000);
    await leases.rotateEpoch((await leases.epoch('e1')).epoch, 'e2');
    const seen = new SharedSeen(redis, k, 'poll');
    const entry = { source: 'A', key: '7', identity: 'x', record: { id: 7 } };
    await seen.raise(grant.value, entry);
    await seen.resolve(grant.value, entry);
    await seen.catchUp('raise', entry);
    // two-phase: claimed under a token, taken over by a new holder, settled
    await seen.resolve(grant.value, entry, grant.token);
    await seen.raise(grant.value, entry, grant.token);
    const [claimed] = await seen.stored('raised');
    await seen.takeOver(grant.value, 'raised', claimed, grant.token + 1);
    await seen.settleRaise(entry, grant.token + 1);
    await seen.settleResolve({ ...entry, record: undefined }, grant.token);
    const ledger = new SharedLedger(redis, k, 'A', 'a');
    const person = await ledger.claim('1', 'Retry', { by: 'alice' });
    if (person.ok) await person.confirm();
    await ledger.claim('1', 'Abort', { supersedes: () => true });
    const auto = await ledger.claim('2', 'Retry', { leaseValue: grant.value });
    if (auto.ok) await auto.release();
    await ledger.reseed();
    const defaults = new SharedDefaults(redis, k, 'policy');
    await defaults.schedule(grant.value, '3', 1, { answer: 'Retry' });
    await defaults.take(grant.value, '3');
    await defaults.schedule(grant.value, '4', 1, { answer: 'Retry' });
    await defaults.takeDue(grant.value, 10);
    await defaults.giveBack('4', 1, { answer: 'Retry' });
    await defaults.cancel('4');
    const once = new SharedOnce(redis, k);
    await once.useForm('page', '5', 'mac', Date.now() + 60000, { maxPerError: 2, maxAll: 5 });
    await once.formsFull('page', '5', { maxPerError: 2, maxAll: 5 });
    await sharedSecret(redis, k, 'page', 'candidate');
    await registrationUsers(redis, k, keys.replicas, 'handler', 'a', 'add');
    await registrationUsers(redis, k, keys.replicas, 'handler', 'a', 'remove');
    await new SharedValue(redis, k, 'run:watch').write(grant.value, '{}');
    const lock = await new ApplyLocks(redis, k, 'a').take(1, 'apply');
    await lock.confirm();
    await lock.release();
    await leases.release('http://sim.example|https://sim.example:8443', grant.value);
    const coordinator = new Coordinator({ redis, prefix: keys.prefix, leaseMs: 30000, replica: 'b' });
    coordinator.join('other');
    await coordinator.round();
    await coordinator.close();

    for (const call of calls) {
      const slots = new Set(call.keys.map((key) => calculateSlot(key)));
      const name = Object.entries(scripts).find(([, text]) => text === call.script)?.[0] ?? '?';
      assert.ok(slots.size <= 1, `${name} names keys of ${slots.size} hash slots: ${call.keys.join(', ')}`);
    }
    const run = new Set(calls.map((c) => c.script));
    const missing = Object.entries(scripts)
      .filter(([, text]) => !run.has(text))
      .map(([name]) => name);
    assert.deepEqual(missing, [], 'every script is checked');
  });
});
