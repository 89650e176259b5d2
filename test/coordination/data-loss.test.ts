/**
 * Redis losing its data (FLUSHALL, a restart without persistence) is told apart from a first start by a replica
 * that takes an instrument's lease right after it, also when the loss falls inside its round: after it read the
 * group's epoch and before it took the lease, and when it never saw the lease's token (it was free at its last
 * look). Found by the coordination fault test under load: the new holder raised a pending error again, unmarked.
 */
import assert from 'assert';

import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';
import { until } from '../support/until';

describeWithRedis('coordination: a loss of Redis data inside a round (issue 29 finding 2)', function () {
  const db = useRedis();
  let n = 0;
  const coordinator = useCoordinators(db);

  it('a lease taken after the data went, between the epoch read and the grant, is flagged as after a loss', async function () {
    const prefix = `lh-loss-${process.pid}-${++n}`;
    const holder = coordinator('z', prefix);
    holder.join('inst');
    await holder.round();
    const other = coordinator('b', prefix);
    const inst = other.join('inst');
    await until(() => inst.state.role === 'standby', 'b stands by', 5000);
    assert.equal(inst.dataLost, undefined);
    // as a replica whose rounds found the lease free (it joined just before the holder took it): no token known
    inst.knownToken = 0;

    // the holder pauses; Redis loses everything right after b's round read the epoch
    const read = other.leases.epoch.bind(other.leases);
    let flushed = false;
    other.leases.epoch = async (candidate: string): Promise<{ epoch: string; server: string }> => {
      const epoch = await read(candidate);
      if (!flushed) {
        flushed = true;
        await db.redis.flushall();
      }
      return epoch;
    };
    await other.round();
    assert.ok(flushed);
    assert.equal(inst.state.role, 'holder', 'b takes the lease nobody holds any more');
    assert.ok(inst.dataLost, 'b knows Redis lost its data: what it raises again goes out marked');
    assert.equal(inst.dataLost?.token, inst.grant?.token);
  });

  it('a lease taken on a first start is not flagged', async function () {
    const prefix = `lh-loss-${process.pid}-${++n}`;
    const c = coordinator('b', prefix);
    const inst = c.join('inst');
    await until(() => inst.state.role === 'holder', 'b holds', 5000);
    await c.round();
    assert.equal(inst.dataLost, undefined);
  });
});
