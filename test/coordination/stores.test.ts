import assert from 'assert';

import fc from 'fast-check';

import { CoordinationConfigError, coordinationSettings } from '../../src/coordination/config';
import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { FencedError, Leases } from '../../src/coordination/leases';
import {
  registrationUsers,
  SharedDefaults,
  SharedLedger,
  sharedSecret,
  STALE_LEDGER_CLAIM_MS,
  staleClaimMsFor,
} from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';

describe('coordination: lh-coordination settings', function () {
  it('refuses a password in the URL (it belongs in credentials), naming the field', function () {
    assert.throws(
      () => coordinationSettings({ url: 'redis://:s3cret@127.0.0.1:6379' }),
      (err: unknown) => err instanceof CoordinationConfigError && err.field === 'url' && !err.message.includes('s3cret'),
    );
  });

  it('refuses what it cannot use, each with the field and the rule', function () {
    const cases: [Record<string, unknown>, string][] = [
      [{ url: '' }, 'url'],
      [{ url: 'http://127.0.0.1:6379' }, 'url'],
      [{ url: 'redis://a:1,redis://b:2' }, 'url'],
      [{ url: 'redis://a:1', mode: 'sentinel' }, 'sentinelName'],
      [{ url: 'redis://a:1', prefix: 'has space' }, 'prefix'],
      [{ url: 'redis://a:1', leaseSeconds: 0 }, 'leaseSeconds'],
      [{ url: 'redis://a:1', leaseSeconds: 'soon' }, 'leaseSeconds'],
    ];
    for (const [config, field] of cases) {
      assert.throws(
        () => coordinationSettings(config),
        (err: unknown) => err instanceof CoordinationConfigError && err.field === field,
        JSON.stringify(config),
      );
    }
    assert.deepEqual(coordinationSettings({ url: 'rediss://r.example:6380' }), {
      urls: ['rediss://r.example:6380'],
      database: 0,
      mode: 'single',
      sentinelName: '',
      prefix: 'labwire',
      leaseMs: 5000,
    });
  });
});

describeWithRedis('coordination: shared stores on a real Redis', function () {
  const db = useRedis();
  let keys: CoordinationKeys;
  let n = 0;

  beforeEach(function () {
    keys = new CoordinationKeys(`lh-stores-${process.pid}-${++n}`);
  });

  async function holder(replica = 'a'): Promise<string> {
    const grant = await new Leases(db.redis, keys).acquire('inst', replica, 30000);
    assert.ok(grant.token > 0);
    return grant.value;
  }

  it('answer ledger: of any number of concurrent claims from several replicas, exactly one wins; the others see it', async function () {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 12 }), fc.boolean(), async (claimants, confirm) => {
        const k = new CoordinationKeys(`lh-ledger-${process.pid}-${++n}`).instrument('inst');
        const ledgers = Array.from({ length: claimants }, (_, i) => new SharedLedger(db.redis, k, 'A', `r${i}`));
        const claims = await Promise.all(ledgers.map((l, i) => l.claim('e1', `resp${i}`, { by: `user${i}` })));
        const winners = claims.filter((c) => c.ok);
        assert.equal(winners.length, 1, 'one answer per error');
        const won = winners[0];
        if (!won.ok) return;
        if (confirm) await won.confirm();
        else await won.release();
        const after = await ledgers[0].lookup('e1');
        if (confirm) assert.equal(after?.outcome, 'answered');
        else assert.equal(after, undefined, 'a refused answer frees the error for the next try');
        for (const c of claims) if (!c.ok) assert.equal(c.existing.errorKey, 'e1');
      }),
      { numRuns: 40 },
    );
  });

  it('answer ledger: an automatic answer names the lease; a stale holder is refused before anything is claimed', async function () {
    const k = keys.instrument('inst');
    const stale = await holder('a');
    await db.redis.del(k.lease); // expired
    const fresh = await holder('b');
    const ledger = new SharedLedger(db.redis, k, 'A', 'a');
    await assert.rejects(ledger.claim('e1', 'Retry', { by: 'policy', leaseValue: stale }), FencedError);
    assert.equal(await ledger.lookup('e1'), undefined, 'nothing claimed');
    const claim = await new SharedLedger(db.redis, k, 'A', 'b').claim('e1', 'Retry', { by: 'policy', leaseValue: fresh });
    assert.ok(claim.ok);
    // a person's answer on any replica (an answer page POSTed to a standby) needs no lease, and sees the claim
    const person = await ledger.claim('e1', 'Abort', { by: 'alice' });
    assert.ok(!person.ok && person.existing.by === 'policy');
  });

  it('pending defaults: a due default is handed out once, whatever the number of concurrent takers; cancelled ones never', async function () {
    const k = keys.instrument('inst');
    const lease = await holder();
    const defaults = new SharedDefaults(db.redis, k);
    for (let i = 0; i < 50; i++) await defaults.schedule(lease, `e${i}`, 1000 + i, { answer: 'Retry', i });
    assert.equal(await defaults.cancel('e7'), true);
    const takes = await Promise.all(Array.from({ length: 8 }, () => defaults.takeDue(lease, 1000 + 40)));
    const taken = takes.flat().map((d) => d.key);
    assert.equal(taken.length, new Set(taken).size, 'no default twice');
    assert.equal(taken.length, 40, 'every due one (41 due, one cancelled)');
    assert.ok(!taken.includes('e7'));
    assert.deepEqual(
      (await defaults.takeDue(lease, 5000)).map((d) => d.key),
      Array.from({ length: 9 }, (_, i) => `e${41 + i}`),
      'the rest when due',
    );
    await db.redis.del(k.lease);
    await assert.rejects(defaults.takeDue(lease, 9999), FencedError, 'a holder that lost its lease takes nothing');
  });

  it('the page secret is the first replica’s on all', async function () {
    const k = keys.instrument('inst');
    const a = await sharedSecret(db.redis, k, 'page', 'secret-of-a');
    const b = await sharedSecret(db.redis, k, 'page', 'secret-of-b');
    assert.equal(a, 'secret-of-a');
    assert.equal(b, 'secret-of-a');
  });

  it('answer ledger: a claim gives way only to what `supersedes` says is over (another error under a reused id)', async function () {
    const k = keys.instrument('inst');
    const a = new SharedLedger(db.redis, k, 'A', 'a');
    const b = new SharedLedger(db.redis, k, 'A', 'b');
    const old = await a.claim('7', 'Retry', { identity: 'old-error' });
    assert.ok(old.ok);
    await old.confirm();
    const refused = await b.claim('7', 'Abort', { identity: 'old-error', supersedes: () => false });
    assert.ok(!refused.ok && refused.existing.replica === 'a', 'the same error: refused, naming the replica');
    const reused = await b.claim('7', 'Abort', { identity: 'new-error', supersedes: (e) => e.identity !== 'new-error' });
    assert.ok(reused.ok, 'an answer kept for the error that had the id before gives way');
    const again = await a.claim('7', 'Retry', { identity: 'new-error', supersedes: (e) => e.identity !== 'new-error' });
    assert.ok(!again.ok && again.existing.replica === 'b', 'the new error is answered once');
  });

  it("answer ledger: a claim in flight is stale by Redis's clock, not by the replicas' (a host whose clock runs 15 min ahead)", async function () {
    const prefix = `lh-skew-${process.pid}`;
    const now = Date.now();
    const right = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'right', now: () => Date.now() });
    const ahead = new Coordinator({
      redis: db.redis,
      prefix,
      leaseMs: 60000,
      replica: 'ahead',
      now: () => Date.now() + 15 * 60_000,
    });
    const behind = new Coordinator({
      redis: db.redis,
      prefix,
      leaseMs: 60000,
      replica: 'behind',
      now: () => Date.now() - 15 * 60_000,
    });
    const inFlight = await right.answerClaims('inst').claim('A', '9', 'Retry', {});
    assert.ok(inFlight.ok, 'a person answers on one replica (its request in flight)');
    const second = await ahead.answerClaims('inst').claim('A', '9', 'Abort', {});
    assert.ok(!second.ok, 'another replica, its clock 15 min ahead, does not take the claim in flight for a dead one');
    // a claim really left by a dead replica (claimed 11 min ago by Redis's clock) gives way, whatever the clock says
    const order = `${new CoordinationKeys(prefix).instrument('inst').ledger('A')}:order`;
    const dead = await behind.answerClaims('inst').claim('A', '10', 'Retry', {});
    assert.ok(dead.ok);
    await db.redis.zadd(order, String(now - 11 * 60_000), '10');
    const taken = await right.answerClaims('inst').claim('A', '10', 'Abort', {});
    assert.ok(taken.ok, 'a claim in flight for longer than any request gives way (its replica died mid-request)');
  });

  it('answer ledger: a claim stays in flight as long as an answer request may take (an lh-server timeout of 15 min)', async function () {
    const prefix = `lh-slow-${process.pid}`;
    const order = `${new CoordinationKeys(prefix).instrument('slow').ledger('A')}:order`;
    const coordinators = ['a', 'b'].map((replica) => new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica }));
    try {
      for (const c of coordinators) c.join('slow', { requestTimeoutMs: 15 * 60_000 });
      const [a, b] = coordinators.map((c) => c.answerClaims('slow'));
      const first = await a.claim('A', '3', 'Retry', {});
      assert.ok(first.ok);
      await db.redis.zadd(order, String(Date.now() - 11 * 60_000), '3'); // its request still waits on a slow instrument
      assert.ok(!(await b.claim('A', '3', 'Abort', {})).ok, 'not taken for a dead replica’s while a request may still be open');
      await db.redis.zadd(order, String(Date.now() - 32 * 60_000), '3');
      assert.ok(
        (await b.claim('A', '3', 'Abort', {})).ok,
        'past the longest request (login and answer, twice over) it gives way',
      );
    } finally {
      for (const c of coordinators) await c.close();
    }
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 24 * 3600_000 }), (timeout) => {
        const stale = staleClaimMsFor(timeout);
        return stale >= STALE_LEDGER_CLAIM_MS && stale > 2 * timeout;
      }),
    );
  });

  it('B handler registration: only the last live replica that uses it unregisters', async function () {
    const k = keys.instrument('inst');
    const leases = new Leases(db.redis, keys);
    await leases.heartbeat('a', 30000);
    await leases.heartbeat('b', 30000);
    await leases.heartbeat('dead', 100);
    for (const r of ['a', 'b', 'dead']) await registrationUsers(db.redis, k, keys.replicas, 'handler', r, 'add');
    await new Promise((r) => setTimeout(r, 150)); // 'dead' died without saying so
    assert.equal(
      await registrationUsers(db.redis, k, keys.replicas, 'handler', 'a', 'remove'),
      1,
      'b still uses it: a must not unregister',
    );
    assert.equal(
      await registrationUsers(db.redis, k, keys.replicas, 'handler', 'b', 'remove'),
      0,
      'b is the last: it unregisters',
    );
  });
});
