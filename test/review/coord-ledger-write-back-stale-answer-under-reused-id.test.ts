/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): after a loss each replica writes its own
 * claims back where no entry is (HSETNX), so of two replicas' entries under one error id the first written back wins,
 * not the newest. With an id the instrument reused (error X answered by `a`; later error Y under the same id answered
 * by a person on `b`, whose answer is still in flight), `a` writing back first put back its answer to X: the entry of
 * Y's answer in flight was lost for good, and an automatic answer to Y then took X's answer for another error's and
 * went out: Y answered twice. Of two entries under one id the newest (by its `at`) is the one kept.
 * Real Redis; the rounds are stepped by hand, the hold runs on a fake clock, the replicas' clocks are set by the test.
 */
import assert from 'assert';

import { answeredAnother } from '../../src/client/answer-ledger';
import { fingerprint, identityOf } from '../../src/client/error-identity';
import { CoordinationKeys } from '../../src/coordination/keys';
import { SharedLedger, type StoreRedis } from '../../src/coordination/stores';
import { useFakeTimeouts } from '../support/fake-timeouts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: the write-back after a loss keeps the newest answer under a reused id', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();

  for (const first of ['a', 'b'] as const) {
    it(`the answer in flight to the error now under the id refuses an automatic one (${first} writes back first)`, async function () {
      const clock = fakeTimeouts();
      let later = 0;
      const now = { now: () => Date.now() + later };
      const prefix = `lh-review-reused-${process.pid}-${first}`;
      const a = coordinator('a', prefix, now);
      const ia = a.join('inst');
      await a.round();
      const b = coordinator('b', prefix, now);
      b.join('inst');
      await b.round();
      assert.equal(ia.state.role, 'holder');
      const x = identityOf({ id: 7, title: 'Clot detected', date: '2026-01-01T08:00:00Z', severity: 'Error' });
      const y = identityOf({ id: 7, title: 'Door open', date: '2026-01-01T09:00:00Z', severity: 'Error' });

      const toX = await a
        .answerClaims(ia.instrumentKey)
        .claim('A', '7', 'Retry', { by: 'operator', ...(x ? { identity: x } : {}) });
      assert.ok(toX.ok);
      await toX.confirm();
      later += 10_000; // later in the run: the instrument reused id 7 for error Y
      const toY = await b
        .answerClaims(ia.instrumentKey)
        .claim('A', '7', 'Abort', { by: 'operator', ...(y ? { identity: y } : {}) });
      assert.ok(toY.ok, "the answer to X was for another error: b's answer to Y is claimed (in flight: a slow instrument)");

      await db.redis.flushall();
      const [one, two] = first === 'a' ? [a, b] : [b, a];
      await one.round();
      await two.round();
      const holder = a.held().length > 0 ? a : b; // whoever took the lease back after the loss answers automatically
      const auto = holder
        .answerClaims(ia.instrumentKey)
        .claim('A', '7', 'Retry', { automatic: true, ...(y ? { identity: y } : {}) });
      await clock.tickAsync(2 * holder.roundMs + 1000);
      const claim = await auto;
      assert.equal(claim.ok, false, "refused: b's answer to Y is in flight");
      if (!claim.ok) assert.deepEqual([claim.existing.replica, claim.existing.outcome], ['b', 'in-flight']);
      await toY.release();
    });
  }

  it('a claim made after the loss and still in flight is not replaced by an older entry stamped by a clock ahead', async function () {
    const keys = new CoordinationKeys(`lh-review-reused-skew-${process.pid}`).instrument('inst');
    const redis = db.redis as unknown as StoreRedis;
    const a = new SharedLedger(redis, keys, 'A', 'a', () => Date.now() + 30_000); // a's clock runs 30 s ahead
    const b = new SharedLedger(redis, keys, 'A', 'b');
    const x = identityOf({ id: 7, title: 'Clot detected', date: '2026-01-01T08:00:00Z' })!;
    const y = identityOf({ id: 7, title: 'Door open', date: '2026-01-01T09:00:00Z' })!;
    const toX = await a.claim('7', 'Retry', { by: 'operator', identity: fingerprint(x) });
    assert.ok(toX.ok);
    await toX.confirm();
    await db.redis.del(keys.ledger('A'), `${keys.ledger('A')}:order`); // Redis loses its data
    const toY = await b.claim('7', 'Abort', { by: 'operator', identity: fingerprint(y) }); // the error now under 7
    assert.ok(toY.ok, 'in flight');
    await a.reseed(); // a learns of the loss late and writes back its answer to X, stamped 30 s ahead
    const auto = await b.claim('7', 'Retry', {
      identity: fingerprint(y),
      supersedes: (existing) => existing.outcome === 'answered' && answeredAnother({ ...existing }, y),
    });
    assert.equal(auto.ok, false, 'the answer to Y in flight refuses a second one');
    await toY.release();
  });
});
