/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): a replica writes its own answer claims back
 * in the round in which it learns of the loss, and only then: the next round sees the group's new epoch as its own
 * and finds no loss. A Redis error during that write-back (Redis restarting drops connections; a command timing out
 * on a Redis still loading) ended the round, and the claims not yet written never went back: an answer the replica
 * still had in flight no longer refused another replica's (answered twice). A write-back that did not finish must be
 * tried again at the next round. Real Redis; the failure is one refused call of the write-back.
 */
import assert from 'assert';

import FakeTimers from '@sinonjs/fake-timers';

import { Coordinator } from '../../src/coordination/coordinator';
import { LEDGER_WRITE_BACK } from '../../src/coordination/scripts';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: a write-back of answer claims cut short by a Redis error', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const made: Coordinator[] = [];
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(async function () {
    for (const c of made.splice(0)) await c.close();
    clock?.uninstall();
    clock = undefined;
  });

  it("is tried again at the next round: the answer in flight still refuses another replica's", async function () {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] }); // rounds run only when stepped here
    const prefix = `lh-review-write-back-${process.pid}`;
    let failNext = false;
    const redis = new Proxy(db.redis, {
      get(target, prop, receiver) {
        if (prop !== 'eval') return Reflect.get(target, prop, receiver) as unknown;
        return (script: string, numKeys: number, ...args: (string | number)[]) => {
          if (failNext && script === LEDGER_WRITE_BACK) {
            failNext = false;
            return Promise.reject(new Error('read ECONNRESET'));
          }
          return target.eval(script, numKeys, ...args);
        };
      },
    });
    const a = coordinator('a', prefix);
    const ia = a.join('inst');
    await a.round();
    // b stands by (a person answered on it); its calls go through the proxy
    const b = new Coordinator({ redis, prefix, leaseMs: 60000, replica: 'b' });
    made.push(b);
    const ib = b.join('inst');
    await b.round();
    assert.equal(ia.state.role, 'holder');
    assert.equal(ib.state.role, 'standby');

    const sent = await b.answerClaims(ib.instrumentKey).claim('A', 'e1', 'Retry', { by: 'operator' });
    assert.ok(sent.ok, "b's answer is in flight (a slow instrument)");
    await db.redis.flushall();
    await a.round(); // a learns of the loss first and holds the instrument again
    assert.equal(ia.state.role, 'holder');
    failNext = true;
    await b.round(); // b learns of the loss; its write-back fails
    await b.round(); // the next round tries again
    // answers after a loss are held up to two rounds (a person's too): the fake clock lets that time pass
    const asked = a.answerClaims(ia.instrumentKey).claim('A', 'e1', 'Abort', { by: 'operator' });
    await clock.tickAsync(2 * a.roundMs);
    const other = await asked;
    assert.equal(other.ok, false, 'the answer b has in flight refuses a second one');
    await sent.release();
  });
});
