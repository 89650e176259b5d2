/**
 * Review finding (leave() during a round): a round reads the joined instruments when it starts and takes free leases
 * for them later. The last lh-server node of an instrument leaving meanwhile (a deploy that deletes it or points it at
 * another instrument) found no lease to give back, and the round took the lease for the instrument that had left: held
 * by a live replica that no longer renews it, the instrument was watched by nobody until the lease ran out (a lease
 * time, the other replicas on standby). leave() now gives the lease back after the round in flight. Real Redis; the
 * leave arrives while the round's acquire is on its way to Redis.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: an instrument leaving while a round takes its lease', function () {
  const db = useRedis();
  const coordinator = useCoordinators(db);

  it('the lease is given back: another replica takes the instrument within two rounds', async function () {
    const prefix = `lh-review-round-leave-${process.pid}`;
    const a = coordinator('a', prefix);
    a.join('inst');
    const acquire = a.leases.acquire.bind(a.leases);
    let left: Promise<void> | undefined;
    a.leases.acquire = (...args) => {
      const taking = acquire(...args);
      left = a.leave('inst'); // the lh-server node is deleted while the acquire is on its way
      return taking;
    };
    await a.round();
    assert.ok(left, "the round tried to take the instrument's lease");
    await left;
    assert.equal(await a.leases.holder('inst'), undefined, 'no lease held for an instrument a no longer has');
    const b = coordinator('b', prefix);
    const ib = b.join('inst');
    await b.round();
    await b.round(); // free two rounds running (a is still listed as knowing it): taken beyond b's share
    assert.equal(ib.state.role, 'holder', 'b watches the instrument, not a lease time later');
  });
});
