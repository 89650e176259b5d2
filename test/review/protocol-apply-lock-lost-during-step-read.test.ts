/**
 * Review finding (apply locks at the seam of the update's new step read): an apply's update now reads the step first
 * (its custom liquid settings, which the protocol read does not show) and then PUTs it. The protocol's lock in Redis
 * was confirmed before that read, not after it: a read that took long (a slow instrument, a paused Node-RED) while
 * the lock expired, or Redis lost it and another Node-RED's apply took it, still sent the PUT, so two Node-REDs wrote
 * the protocol at once. README: "a lock lost midway stops the apply before its next write". The lock is now confirmed
 * after the read, right before the write. Seeded over which write of the plan meets the lock moving during its read
 * and how it moves (taken by another Node-RED, or gone); real Redis, real HTTP against the simulator.
 */
import assert from 'node:assert/strict';

import { type PrepApi } from '../../src/client';
import { CoordinationKeys } from '../../src/coordination/keys';
import { homeOf, resetHomes } from '../../src/instrument';
import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';
import { planned } from '../support/protocol-plan';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

describeWithRedis('review: an apply’s lock lost while its update reads the step is not written past', function () {
  this.timeout(30000);
  const { sim, make } = useClients();
  const db = useRedis();
  const coordinator = useCoordinators(db);
  let n = 0;
  afterEach(() => resetHomes());

  const seed = Number(process.env.LH_SEED ?? Date.now() % 100000);
  const cases = Number(process.env.LH_CASES ?? 3);

  it(`seeded (seed ${seed}, LH_SEED to replay): no write of this apply after its lock moved`, async function () {
    const rng = new Rng(seed);
    for (let round = 0; round < cases; round++) {
      const prefix = `lh-apply-step-read-${process.pid}-${++n}`;
      const client = make();
      const pid = sim.addProtocol(`Read ${round}`);
      const count = rng.int(1, 3);
      for (let i = 0; i < count; i++) await client.prep.createStep(pid, { stepType: 'PauseStep', name: `P${i}`, duration: 5 });
      const read = await readProtocol(client.runs, pid, 'plan');
      // every step updated (a new duration): each write is an update with its step read first
      const desired = readDesired({ steps: read.export.steps.map((s) => ({ ...s, duration: 9 })) }, 'plan');
      const { plan } = planned(read.export, desired, { protocolId: pid, instrument: client.baseUrl, id: `plan-${round}` });
      assert.equal(plan.changes.length, count);

      const key = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`).applyLock(pid);
      const at = rng.below(count); // the update whose step read meets the lock moving
      const how = rng.pick(['taken by another Node-RED', 'gone (expired, Redis lost it)'] as const);
      let reads = 0;
      const prep = new Proxy(client.prep, {
        get(target, name, receiver) {
          const value: unknown = Reflect.get(target, name, receiver);
          if (name !== 'getStep' || typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (reads++ === at) {
              if (how === 'gone (expired, Redis lost it)') await db.redis.del(key);
              else await db.redis.set(key, `0123abcd:lab-pc-2/4711-3fa9`, 'PX', 30000);
            }
            return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      }) as PrepApi;
      resetHomes();
      homeOf(client.baseUrl).useApplyLocks(coordinator(`lab-a/${round}`, prefix).applyLocks(`${sim.baseUrl}|`));
      let writes = 0;
      const logged = sim.requests.length;
      const story = `seed ${seed} round ${round}: ${count} updates, the lock ${how} during read ${at}`;
      const outcome = await applyPlan(
        {
          prep,
          runs: client.runs,
          audited: (_why, work) => {
            writes++;
            return work();
          },
        },
        plan,
        'apply',
      ).then(
        (r) => r.outcome as unknown,
        (e: unknown) => e,
      );
      assert.ok(outcome instanceof ApplyStopped, `stopped (${story}): ${String(outcome)}`);
      assert.equal(outcome.kind, 'busy', story);
      assert.match(outcome.message, /the lock this apply held in Redis was lost/, story);
      assert.equal(writes, at, `no write after the lock moved (${story})`);
      assert.equal(
        sim.requests.slice(logged).filter((r) => r.method === 'PUT').length,
        at,
        `no PUT sent after the lock moved (${story})`,
      );
      assert.equal(outcome.applied.length, at, story);
      assert.equal(outcome.notApplied.length, count - at, story);
      assert.deepEqual(outcome.unconfirmed, [], story);
      if (how === 'taken by another Node-RED')
        assert.equal(await db.redis.get(key), '0123abcd:lab-pc-2/4711-3fa9', `the other Node-RED’s lock kept (${story})`);
    }
  });
});
