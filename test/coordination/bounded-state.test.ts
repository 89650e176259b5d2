/**
 * Redis state stays bounded (issue 19): the shared answer ledger keeps at most its bound per instrument source (the
 * oldest answered entries go first, a claim that may still be in flight never), and the used form tokens at most
 * their caps per error and per page, refusing when full rather than forgetting a used token. Properties over random
 * long sequences on a real Redis, checked against a model of what must still be refused.
 */
import assert from 'assert';

import fc from 'fast-check';

import { CoordinationKeys } from '../../src/coordination/keys';
import { SharedLedger, SharedOnce } from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

const MAX_KEPT = 8;

type LedgerOp = { key: number; then: 'confirm' | 'release' | 'leave' };

describeWithRedis('coordination: Redis state stays bounded', function () {
  this.timeout(120000);
  const db = useRedis();
  let n = 0;
  const fresh = (): CoordinationKeys => new CoordinationKeys(`lh-bounded-${process.pid}-${++n}`);

  it('answer ledger: at most its bound (plus live claims) under any long sequence; live claims and the newest answers stay', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: 60 }),
            then: fc.constantFrom<LedgerOp['then']>('confirm', 'confirm', 'release', 'leave'),
          }),
          { minLength: 50, maxLength: 250 },
        ),
        async (ops) => {
          const k = fresh().instrument('inst');
          const ledger = new SharedLedger(db.redis, k, 'A', 'r1', Date.now, { maxKept: MAX_KEPT, staleClaimMs: 60 * 60_000 });
          const inFlight = new Set<string>();
          const answered: string[] = []; // in order of confirmation
          for (const op of ops) {
            const key = `e${op.key}`;
            const claim = await ledger.claim(key, 'Retry');
            if (claim.ok) {
              if (op.then === 'confirm') {
                await claim.confirm();
                answered.push(key);
              } else if (op.then === 'release') await claim.release();
              else inFlight.add(key);
            } else {
              // refused: the model must know the error as answered or in flight (nothing answered twice)
              assert.ok(inFlight.has(key) || answered.includes(key), `${key} refused, so it was claimed before`);
            }
            const size = await db.redis.hlen(k.ledger('A'));
            assert.equal(await db.redis.zcard(`${k.ledger('A')}:order`), size, 'the order zset follows the hash');
            assert.ok(size <= MAX_KEPT + inFlight.size, `bounded: ${size} entries, ${inFlight.size} live claims`);
            for (const live of inFlight) assert.ok(await ledger.lookup(live), `the live claim ${live} is kept`);
          }
          // the newest answers are kept (those the bound leaves room for beside the live claims)
          const room = Math.max(0, MAX_KEPT - inFlight.size);
          const newest = [...new Set([...answered].reverse())].slice(0, room);
          for (const key of newest)
            if (!inFlight.has(key)) assert.equal((await ledger.lookup(key))?.outcome, 'answered', `${key} kept`);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('answer ledger: kept 30 days after its last claim or answer (an instrument taken out leaves nothing for ever)', async function () {
    const k = fresh().instrument('gone');
    const ledger = new SharedLedger(db.redis, k, 'A', 'r1');
    const claim = await ledger.claim('1', 'Retry');
    assert.ok(claim.ok);
    const month = 30 * 24 * 3600_000;
    for (const key of [k.ledger('A'), `${k.ledger('A')}:order`]) {
      const ttl = await db.redis.pttl(key);
      assert.ok(ttl > month - 60_000 && ttl <= month, `${key} expires (pttl ${ttl})`);
    }
    await db.redis.pexpire(k.ledger('A'), 1000);
    await claim.confirm();
    assert.ok((await db.redis.pttl(k.ledger('A'))) > month - 60_000, 'an answer keeps it another 30 days');
  });

  it('answer ledger: claims left in flight by dead replicas are dropped once no request can still be open', async function () {
    const k = fresh().instrument('inst');
    const dead = new SharedLedger(db.redis, k, 'A', 'dead', Date.now, { maxKept: MAX_KEPT, staleClaimMs: 0 });
    for (let i = 0; i < 3 * MAX_KEPT; i++) assert.ok((await dead.claim(`lost${i}`, 'Retry')).ok);
    await new Promise((r) => setTimeout(r, 5)); // older than the (zero) stale bound on Redis's clock
    const live = await dead.claim('now', 'Retry');
    assert.ok(live.ok);
    await live.confirm();
    assert.ok((await db.redis.hlen(k.ledger('A'))) <= MAX_KEPT, 'back within the bound');
    assert.equal((await dead.lookup('now'))?.outcome, 'answered');
  });

  it('used form tokens: at most the caps per error and per page; a used token is never accepted again; full refuses', async function () {
    const PER_ERROR = 3;
    const ALL = 7;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ error: fc.integer({ min: 0, max: 4 }), mac: fc.integer({ min: 0, max: 30 }) }), {
          minLength: 20,
          maxLength: 150,
        }),
        async (uses) => {
          const keys = fresh();
          const k = keys.instrument('inst');
          const replicas = [new SharedOnce(db.redis, k), new SharedOnce(db.redis, k)];
          const used = new Map<string, Set<string>>();
          let total = 0;
          const expiresAt = Date.now() + 10 * 60_000;
          for (const [i, u] of uses.entries()) {
            const error = `e${u.error}`;
            const mac = `${error}-m${u.mac}`; // a MAC binds its error
            const mine = used.get(error) ?? new Set<string>();
            const expected = !mine.has(mac) && mine.size < PER_ERROR && total < ALL;
            const got = await replicas[i % 2].useForm('page', error, mac, expiresAt, { maxPerError: PER_ERROR, maxAll: ALL });
            assert.equal(got, expected, `use ${i}: ${error} ${mac}`);
            if (got) {
              mine.add(mac);
              used.set(error, mine);
              total++;
            }
          }
          assert.ok((await db.redis.zcard(k.shared('forms:page'))) <= ALL);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('used form tokens: expired ones make room again, and their keys expire with the last form', async function () {
    const k = fresh().instrument('inst');
    const once = new SharedOnce(db.redis, k);
    const caps = { maxPerError: 2, maxAll: 10 };
    // forms that expire on Redis's clock a moment after they were posted
    const redisNow = async (): Promise<number> => {
      const [s, us] = await db.redis.time();
      return Number(s) * 1000 + Math.floor(Number(us) / 1000);
    };
    const soon = (await redisNow()) + 300;
    assert.ok(await once.useForm('page', 'e1', 'old-1', soon, caps));
    assert.ok(await once.useForm('page', 'e1', 'old-2', soon, caps));
    assert.equal(await once.formsFull('page', 'e1', caps), true);
    await until(async () => (await redisNow()) > soon, "the forms' expiry on Redis's clock", 2000);
    assert.equal(await once.useForm('page', 'e1', 'late', soon, caps), false, 'a form expired on Redis’s clock is refused');
    assert.equal(await once.formsFull('page', 'e1', caps), false, 'expired, they no longer fill the set');
    const live = Date.now() + 60_000;
    assert.ok(await once.useForm('page', 'e1', 'new-1', live, caps), 'expired tokens no longer count');
    assert.ok(await once.useForm('page', 'e1', 'new-2', live, caps));
    assert.equal(await once.useForm('page', 'e1', 'new-3', live, caps), false, 'full of live tokens: refused');
    assert.equal(await once.useForm('page', 'e1', 'new-1', live, caps), false, 'used once');
    assert.ok(await once.useForm('page', 'e2', 'other-1', live, caps), 'another error keeps its share');
    assert.equal(await once.formsFull('page', 'e1', caps), true, 'the page can say why e1 is refused: full');
    assert.equal(await once.formsFull('page', 'e2', caps), false);
    const ttl = await db.redis.pttl(k.shared('forms:page'));
    assert.ok(ttl > 0 && ttl <= 60_000, `the page's set expires with its last form (pttl ${ttl})`);
  });
});
