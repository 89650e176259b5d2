/**
 * Review (the rounds of one replica run one at a time): round() waits for a round in flight, so neither a manual
 * round, nor a join's round, nor the timer's runs beside another (two at once read each other's writes half done), every
 * caller's round is run, and none runs after close(): a round asked for before close() and still waiting when it comes
 * runs nothing (before, it took leases after close() had given them back, and they stayed taken by a closed replica).
 * Real Redis; the Redis calls of the replica's leases are counted.
 */
import assert from 'assert';

import type { Coordinator } from '../../src/coordination/coordinator';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

/** Counts the lease calls in flight at once (one round makes them one after another) and the heartbeats. */
function spy(c: Coordinator): { most: number; heartbeats: number[] } {
  const seen = { most: 0, heartbeats: [] as number[] };
  let inFlight = 0;
  const leases = c.leases as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(c.leases))) {
    if (name === 'constructor' || typeof leases[name] !== 'function') continue;
    const original = leases[name].bind(c.leases);
    leases[name] = async (...args: unknown[]) => {
      if (name === 'heartbeat') seen.heartbeats.push(Number(args[1]));
      seen.most = Math.max(seen.most, ++inFlight);
      try {
        return await original(...args);
      } finally {
        inFlight--;
      }
    };
  }
  return seen;
}

describeWithRedis('review: the rounds of one replica never overlap', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);
  let n = 0;

  it('rounds asked for at once (by hand and by a join) run one after another, each of them', async function () {
    const c = coordinator('a', `lh-review-round-overlap-${process.pid}-${++n}`);
    const one = c.join('one');
    const seen = spy(c);
    const rounds = [c.round(), c.round()];
    const two = c.join('two'); // asks for a round at 0 ms, beside the running one before
    rounds.push(c.round(), c.round());
    await Promise.all(rounds);
    await c.round(); // the join's round (if it started) is waited for
    assert.equal(seen.most, 1, 'one lease call in flight at a time: no round beside another');
    assert.ok(seen.heartbeats.length >= 5, `every round asked for ran (${seen.heartbeats.length} heartbeats)`);
    assert.deepEqual([one.state.role, two.state.role], ['holder', 'holder']);
  });

  it('close() while rounds are running and waiting: no round after it, no lease left taken', async function () {
    const prefix = `lh-review-round-overlap-${process.pid}-${++n}`;
    const c = coordinator('a', prefix);
    c.join('inst');
    const seen = spy(c);
    const running = c.round();
    const waiting = c.round();
    await c.close();
    await Promise.all([running, waiting]);
    await c.round(); // after close(): nothing
    assert.deepEqual(seen.heartbeats.slice(0, -1), [c.leaseMs], 'the running round ran, the waiting one did not');
    assert.equal(seen.heartbeats.at(-1), 0, 'close() said last that the replica left');
    assert.equal(await c.leases.holder('inst'), undefined, 'no lease held by the closed replica');
    const live = await db.redis.zrange(c.keys.replicas, 0, -1);
    assert.ok(!live.includes('a'), `the closed replica is not live (${live.join(', ')})`);
  });
});
