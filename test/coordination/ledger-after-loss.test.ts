/**
 * The shared answer ledger when Redis loses its data (issue 29, chaos seed 2207: "answered again after the
 * instrument accepted an answer", 409): an answer one replica had in flight when the ledger went must still refuse
 * another replica's. Each replica writes its own claims back when it learns of the loss, and automatic answers wait
 * two rounds after a loss (a person's too), so every live replica has written its claims back first. Rounds are stepped by hand;
 * the hold runs on a fake clock.
 */
import assert from 'assert';

import FakeTimers from '@sinonjs/fake-timers';

import type { Coordinator, InstrumentCoordination } from '../../src/coordination/coordinator';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('coordination: answers in flight when Redis loses its data (issue 29, invariant c)', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  let n = 0;
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  /** `a` holds the instrument, `b` stands by; both had a round (each knows the group's epoch). */
  async function twoReplicas(): Promise<{
    a: Coordinator;
    b: Coordinator;
    ia: InstrumentCoordination;
    ib: InstrumentCoordination;
  }> {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const prefix = `lh-ledger-loss-${process.pid}-${++n}`;
    const a = coordinator('a', prefix);
    const ia = a.join('inst');
    await a.round();
    const b = coordinator('b', prefix);
    const ib = b.join('inst');
    await b.round();
    assert.equal(ia.state.role, 'holder');
    assert.equal(ib.state.role, 'standby');
    return { a, b, ia, ib };
  }

  it("a replica writes its claims back when it learns of the loss: another replica's answer is refused", async function () {
    const { a, b, ia } = await twoReplicas();
    const sent = await a.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Retry', { automatic: true });
    assert.ok(sent.ok, 'a claims its automatic answer (in flight: a slow instrument)');
    await db.redis.flushall();
    await a.round(); // a learns of the loss: its claim goes back
    const person = await b.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Abort', { by: 'operator' });
    assert.equal(person.ok, false, 'the answer a has in flight refuses a second one');
    if (!person.ok) assert.deepEqual([person.existing.replica, person.existing.outcome], ['a', 'in-flight']);
    await sent.confirm(); // the instrument applied a's answer: the entry written back is confirmed
    const kept = await a.ledger(ia.instrumentKey, 'A').lookup('e1');
    assert.equal(kept?.outcome, 'answered');
  });

  it('a new holder after the loss holds its automatic answers until the old holder wrote its claims back', async function () {
    const { a, b, ia, ib } = await twoReplicas();
    const sent = await a.answerClaims(ia.instrumentKey).claim('A', 'e2', 'Retry', { automatic: true });
    assert.ok(sent.ok);
    await db.redis.flushall();
    await b.round(); // b learns of the loss first and takes the lease nobody holds any more
    assert.equal(ib.state.role, 'holder');
    let settled = false;
    const second = b.answerClaims(ib.instrumentKey).claim('A', 'e2', 'Retry', { automatic: true });
    void second.finally(() => (settled = true));
    await clock?.tickAsync(1000);
    assert.equal(settled, false, 'held while the other replicas may not know of the loss yet');
    await a.round(); // a learns of it at its next round and writes its claim back
    await clock?.tickAsync(2 * b.roundMs);
    // refused by a's claim written back, or fenced: the rounds the fake clock ran meanwhile may have handed the lease
    // back to a (its rendezvous rank); either way nothing is sent
    const claim = await second.catch((err: Error) => err);
    if (claim instanceof Error) assert.match(claim.message, /no longer holds the instrument's lease/);
    else assert.equal(claim.ok, false, 'refused: a has its answer in flight');
    await sent.release();
  });

  it("a person's answer is held too, then refused by an answer in flight before the loss", async function () {
    const { a, b, ia } = await twoReplicas();
    const sent = await a.answerClaims(ia.instrumentKey).claim('A', 'e3', 'Retry', { automatic: true });
    assert.ok(sent.ok);
    await db.redis.flushall();
    await b.round(); // b learns of the loss first; a has not had its round yet
    let settled = false;
    const person = b.answerClaims(ia.instrumentKey).claim('A', 'e3', 'Abort', { by: 'operator' });
    void person.finally(() => (settled = true));
    await clock?.tickAsync(1000);
    assert.equal(settled, false, 'held while the other replicas may not know of the loss yet');
    await a.round();
    await clock?.tickAsync(2 * b.roundMs);
    assert.equal((await person).ok, false, 'refused: a has its answer in flight');
    await sent.release();
  });

  it('without a loss, nothing is held', async function () {
    const { b, ia } = await twoReplicas();
    // a hold would wait on the fake clock, which nothing ticks here: the test would time out
    assert.ok((await b.answerClaims(ia.instrumentKey).claim('A', 'e4', 'Abort', { by: 'operator' })).ok);
  });
});
