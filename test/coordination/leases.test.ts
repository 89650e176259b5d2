import assert from 'assert';

import fc from 'fast-check';
import Redis from 'ioredis';

import { rendezvous } from '../../src/coordination/coordinator';
import { fairShare, planLeases } from '../../src/coordination/fair-share';
import { CoordinationKeys } from '../../src/coordination/keys';
import { FencedError, Leases } from '../../src/coordination/leases';
import { SharedValue } from '../../src/coordination/shared-memory';
import { describeWithRedis, RedisHarness } from '../support/redis-server';

describe('coordination: fair share (pure)', function () {
  it('the shares of the live replicas add up to the instruments, each within one of the even split', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 50 }),
        (instruments, replicas) => {
          const shares = replicas.map((r) => fairShare(instruments, replicas, r));
          assert.equal(
            shares.reduce((a, b) => a + b, 0),
            instruments,
            'every instrument has a place, none two',
          );
          for (const s of shares) assert.ok(Math.abs(s - instruments / replicas.length) < 1, `share ${s}`);
        },
      ),
    );
  });

  it('rounds of plan → release / take free leases converge to an even spread (±1) whatever the start', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        (count, replicas, startOwners, order) => {
          const instruments = Array.from({ length: count }, (_, i) => `inst-${i}`);
          const names = Array.from({ length: replicas }, (_, i) => `r${i}`);
          // any starting spread (a replica that was alone holds everything, ...), each lease held by at most one
          const owner = new Map<string, string>();
          instruments.forEach((inst, i) => {
            const pick = startOwners[i];
            if (pick !== undefined && pick % (replicas + 1) < replicas) owner.set(inst, names[pick % (replicas + 1)]);
          });
          // replicas take turns in an arbitrary order (the array, cycled) for enough rounds
          for (let round = 0; round < 4 * replicas + 4; round++) {
            for (const step of order) {
              const me = names[step % replicas];
              const held = instruments.filter((i) => owner.get(i) === me);
              const others = instruments.filter((i) => owner.get(i) !== me);
              const share = fairShare(count, names, me);
              const plan = planLeases(held, others, share, (k) => rendezvous(me, k));
              for (const k of plan.release) owner.delete(k);
              let mine = held.length - plan.release.length;
              for (const k of plan.acquire) {
                if (mine >= share) break;
                if (!owner.has(k)) {
                  owner.set(k, me);
                  mine++;
                }
              }
            }
          }
          // every replica took part at least once per round only if it appears in `order`; count those
          const active = new Set(order.map((s) => names[s % replicas]));
          const held = [...active].map((r) => instruments.filter((i) => owner.get(i) === r).length);
          if (active.size === replicas) {
            assert.equal(owner.size, count, 'every instrument held');
            for (const h of held) assert.ok(Math.abs(h - count / replicas) < 1 + 1e-9, `spread ${held.join(',')} of ${count}`);
          }
          for (const h of held) assert.ok(h <= Math.ceil(count / replicas), 'no replica above its share');
        },
      ),
      { numRuns: 200 },
    );
  });
});

describeWithRedis('coordination: leases and fencing on a real Redis', function () {
  const harness = new RedisHarness();
  let redis: Redis;
  let prefix = '';
  let n = 0;

  before(async function () {
    await harness.start();
    redis = new Redis(harness.url, { lazyConnect: false });
  });
  after(async function () {
    await redis?.quit();
    await harness.destroy();
  });
  beforeEach(function () {
    prefix = `lh-test-${process.pid}-${++n}`;
  });

  it('one holder at a time, tokens only grow, and every stale holder is fenced off (any interleaving)', async function () {
    this.timeout(120000);
    type Op = { kind: 'acquire' | 'renew' | 'release' | 'expire' | 'write'; replica: number };
    const op = fc.record({
      kind: fc.constantFrom('acquire', 'renew', 'release', 'expire', 'write'),
      replica: fc.integer({ min: 0, max: 2 }),
    }) as fc.Arbitrary<Op>;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const keys = new CoordinationKeys(`${prefix}-${++n}`);
        const leases = new Leases(redis, keys);
        const probe = new SharedValue(redis, keys.instrument('inst'), 'probe'); // a fenced write
        const beliefs: (string | undefined)[] = [undefined, undefined, undefined];
        let lastToken = 0;
        let writes = 0;
        for (const { kind, replica } of ops) {
          const me = `r${replica}`;
          const value = beliefs[replica];
          if (kind === 'acquire') {
            const grant = await leases.acquire('inst', me, 60000);
            if (grant.token > 0) {
              if (value === undefined) assert.ok(grant.token > lastToken, 'a new grant has a larger token');
              lastToken = Math.max(lastToken, grant.token);
              beliefs[replica] = grant.value;
            } else assert.notEqual(grant.holder, me);
          } else if (kind === 'renew' && value) {
            if (!(await leases.renew('inst', value, 60000))) beliefs[replica] = undefined;
          } else if (kind === 'release' && value) {
            await leases.release('inst', value);
            beliefs[replica] = undefined;
          } else if (kind === 'expire') {
            await redis.del(keys.instrument('inst').lease); // what an expiry does; the believers are now stale
          } else if (kind === 'write') {
            const current = await redis.get(keys.instrument('inst').lease);
            const attempt = probe.write(value ?? 'none:none', String(++writes));
            if (value !== undefined && value === current)
              await attempt; // the holder writes
            else await assert.rejects(attempt, FencedError, 'a stale or absent holder is refused');
          }
          // at most one replica's belief matches the lease in Redis
          const current = await redis.get(keys.instrument('inst').lease);
          assert.ok(beliefs.filter((b) => b !== undefined && b === current).length <= 1);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a lease expires on its own: another replica takes it with a larger token, the old holder is fenced', async function () {
    const keys = new CoordinationKeys(prefix);
    const leases = new Leases(redis, keys);
    const memory = new SharedValue(redis, keys.instrument('inst'), 'probe');
    const a = await leases.acquire('inst', 'a', 150);
    assert.ok(a.token > 0);
    const b0 = await leases.acquire('inst', 'b', 150);
    assert.equal(b0.token, 0);
    assert.equal(b0.holder, 'a');
    await new Promise((r) => setTimeout(r, 250)); // a real Redis expiry (its own clock)
    const b = await leases.acquire('inst', 'b', 5000);
    assert.ok(b.token > a.token);
    assert.equal(await leases.renew('inst', a.value, 5000), false, 'compare-and-extend refuses the old value');
    await assert.rejects(memory.write(a.value, '"from a"'), FencedError);
    await memory.write(b.value, '"from b"');
    assert.deepEqual(await memory.read(), { token: b.token, json: '"from b"' }, 'the holder wrote, the old one did not');
  });

  it('replicas that stop heartbeating leave the live set after their lease time', async function () {
    const leases = new Leases(redis, new CoordinationKeys(prefix));
    await leases.heartbeat('a', 150);
    assert.deepEqual((await leases.heartbeat('b', 5000)).sort(), ['a', 'b']);
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(await leases.heartbeat('b', 5000), ['b']);
    assert.deepEqual(await leases.heartbeat('b', 0), [], 'a replica leaving says so');
  });
});
