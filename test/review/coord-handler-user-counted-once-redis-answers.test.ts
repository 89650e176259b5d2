/**
 * Review finding (review61; the B error handler on several Node-REDs): lh-register-handler counts its replica among
 * the handler's users in Redis when it starts, retrying for about 10 s, and registers the handler on the instrument
 * either way. A Redis that refused the count meanwhile (unreachable at start, or full: `maxmemory` with
 * `noeviction` refuses writes) left the replica uncounted for good: review54's recount after a loss counted only the
 * registrations whose count had once been written. The next other replica to stop (a redeploy, a rolling restart) then
 * took itself for the last user and unregistered the handler under the replica still running it. Now a refused count
 * is written at the coordinator's next round that Redis answers.
 * Real Redis, in-process Coordinators, rounds stepped by hand.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: a handler user whose count Redis refused is counted at the next round', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);

  afterEach(async function () {
    await db.redis.config('SET', 'maxmemory', '0');
  });

  it('refused while Redis is full, counted once it takes writes: another replica that stops is not the last', async function () {
    const prefix = `lh-review-reg-refused-${process.pid}`;
    const a = coordinator('a', prefix);
    a.join('inst');
    await a.round();

    await db.redis.config('SET', 'maxmemory', '1'); // noeviction (the default): every write refused (OOM)
    await assert.rejects(a.registrationUsers('inst', 'error-handler:k1', 'add'), /OOM/);
    await db.redis.config('SET', 'maxmemory', '0');
    await a.round();

    const b = coordinator('b', prefix);
    b.join('inst');
    await b.round();
    assert.equal(await b.registrationUsers('inst', 'error-handler:k1', 'add'), 2, 'both replicas use it');
    assert.equal(await b.registrationUsers('inst', 'error-handler:k1', 'remove'), 1, 'b stops: a still uses it');
  });

  it('a node that stopped using it before Redis answered is not counted', async function () {
    const prefix = `lh-review-reg-refused-gone-${process.pid}`;
    const a = coordinator('a', prefix);
    a.join('inst');
    await a.round();

    await db.redis.config('SET', 'maxmemory', '1');
    await assert.rejects(a.registrationUsers('inst', 'error-handler:k1', 'add'), /OOM/);
    await db.redis.config('SET', 'maxmemory', '0');
    assert.equal(await a.registrationUsers('inst', 'error-handler:k1', 'remove'), 0, 'its node stopped');
    await a.round();

    const b = coordinator('b', prefix);
    b.join('inst');
    await b.round();
    assert.equal(await b.registrationUsers('inst', 'error-handler:k1', 'add'), 1, 'b alone uses it');
  });
});
