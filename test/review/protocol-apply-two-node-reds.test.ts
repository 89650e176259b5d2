/**
 * Review lead (protocols as code), now built: applies of one plan from several Node-REDs sharing Redis
 * (lh-coordination). Before, applies waited for each other only within one Node-RED (the instrument's home): two
 * replicas applying one plan at once both passed the base check and both wrote, so a step to create was created twice
 * and plan then refused the protocol. Now an apply takes the protocol's lock in Redis (src/coordination/apply-locks.ts,
 * reached through the home) before its base check: exactly one applies, every other is refused before any write
 * (LH_BUSY), a replica killed mid-apply frees the lock when it expires, and a lock lost mid-apply stops the apply before
 * its next write. Each replica is a home of its own (as a second Node-RED has), over real HTTP against the simulator
 * and a real Redis.
 */
import assert from 'node:assert/strict';

import Redis from 'ioredis';

import { LhError } from '../../src/client';
import { type ApplyLockOptions, ApplyLocks } from '../../src/coordination/apply-locks';
import { CoordinationKeys } from '../../src/coordination/keys';
import { type RedisLike } from '../../src/coordination/leases';
import { RENEW } from '../../src/coordination/scripts';
import { homeOf, resetHomes } from '../../src/instrument';
import { applyPlan, ApplyStopped, readProtocol, requireUniqueNames } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { type Plan } from '../../src/nodes/lh-protocol/plan';
import { useClients } from '../support/client-suite';
import { useFakeTimeouts } from '../support/fake-timeouts';
import { Rng } from '../support/prng';
import { planned } from '../support/protocol-plan';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';
import { until } from '../support/until';

type Client = ReturnType<ReturnType<typeof useClients>['make']>;
type Outcome = string | Error;

describeWithRedis('review: lh-protocol, one plan applied by several Node-REDs at once (lh-coordination)', function () {
  this.timeout(60000);
  const { sim, make } = useClients();
  const db = useRedis();
  const coordinator = useCoordinators(db);
  const fakeTimeouts = useFakeTimeouts();
  let n = 0;
  let prefix = '';
  beforeEach(() => (prefix = `lh-apply-lock-${process.pid}-${++n}`));
  afterEach(() => {
    sim.setFaults({});
    resetHomes();
  });

  /** The lock key of protocol `pid` of the simulator (interface A), under this test's prefix. */
  const lockKey = (pid: number): string => new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`).applyLock(pid);

  /** A protocol with a pause and a lid step, and a plan of `steps` from it (made for the simulator). */
  async function protocolAndPlan(
    client: Client,
    name: string,
    steps: readonly (readonly [string, string, number?])[],
  ): Promise<Plan> {
    const pid = sim.addProtocol(name);
    await client.prep.createStep(pid, { stepType: 'PauseStep', name: 'Pause', duration: 5 });
    await client.prep.createStep(pid, { stepType: 'LidStep', name: 'Lid' });
    const desired = readDesired(
      { steps: steps.map(([step, stepType, duration]) => ({ name: step, stepType, ...(duration ? { duration } : {}) })) },
      'plan',
    );
    const read = await readProtocol(client.runs, pid, 'plan');
    return planned(read.export, desired, { protocolId: pid, instrument: client.baseUrl, id: `plan-${name}` }).plan;
  }

  interface Replica {
    name: string;
    client: Client;
    /** the writes its applies made (each goes through `audited`) */
    writes: number;
    /** runs before each of its writes (the write's index) */
    beforeWrite?: (index: number) => void | Promise<void>;
    /** runs after each of its writes */
    afterWrite?: (index: number) => void | Promise<void>;
  }

  /**
   * Starts `plan`'s apply on a replica: a Node-RED of its own (a home of its own), whose lh-server joined the
   * coordination named `name` (its lock through the home, as lh-server wires it); `spelling` is how it names the
   * instrument (lh-server's instrumentKey).
   */
  function startApply(replica: Replica, plan: Plan, locks: ApplyLocks): Promise<Outcome> {
    resetHomes();
    homeOf(replica.client.baseUrl).useApplyLocks(locks);
    const audited = async <R>(_why: unknown, work: () => Promise<R>): Promise<R> => {
      await replica.beforeWrite?.(replica.writes);
      const index = replica.writes++;
      const result = await work();
      await replica.afterWrite?.(index);
      return result;
    };
    return applyPlan({ prep: replica.client.prep, runs: replica.client.runs, audited }, plan, 'apply').then(
      (r) => r.outcome,
      (e: Error) => e,
    );
  }

  const replicaLocks = (name: string, spelling = `${sim.baseUrl}|`, options: ApplyLockOptions = {}): ApplyLocks =>
    coordinator(name, prefix).applyLocks(spelling, options);

  const CASES = [
    {
      name: 'a create only',
      steps: [
        ['Pause', 'PauseStep', 5],
        ['Lid', 'LidStep'],
        ['New', 'HepaStep'],
      ],
    },
    {
      name: 'a delete, an update and a create',
      steps: [
        ['Pause', 'PauseStep', 7],
        ['New', 'HepaStep'],
      ],
    },
  ] as const;

  for (const c of CASES) {
    it(`${c.name}: two replicas at once, exactly one applies; the other is refused (LH_BUSY) before any write`, async function () {
      const a: Replica = { name: 'lab-a/1-aaaa', client: make(), writes: 0 };
      const b: Replica = { name: 'lab-b/2-bbbb', client: make(), writes: 0 };
      const plan = await protocolAndPlan(a.client, c.name, c.steps);
      await b.client.runs.status(); // both logged in: the two applies start at the same moment
      sim.setFaults({ latencyMs: 200 });
      const outcomes = await Promise.all([startApply(a, plan, replicaLocks(a.name)), startApply(b, plan, replicaLocks(b.name))]);
      sim.setFaults({});
      assert.equal(outcomes.filter((o) => o === 'applied').length, 1, `one applies: ${String(outcomes)}`);
      const refused = outcomes.find((o): o is Error => o instanceof Error);
      assert.ok(refused instanceof LhError, String(refused));
      assert.equal(refused.kind, 'busy');
      assert.equal(refused.code, 'LH_BUSY');
      const holder = outcomes[0] === 'applied' ? a : b;
      const other = holder === a ? b : a;
      assert.match(
        refused.message,
        new RegExp(
          `^protocol ${plan.protocolId} is locked: another Node-RED \\(${holder.name}\\) is applying a plan to it: nothing was written`,
        ),
      );
      assert.equal(other.writes, 0, 'the refused apply wrote nothing');
      assert.equal(holder.writes, plan.changes.length);
      const after = await readProtocol(a.client.runs, plan.protocolId, 'plan');
      assert.equal(after.digest, plan.target, 'the protocol is the plan’s target');
      requireUniqueNames(after, 'plan'); // no step twice
      assert.equal(await db.redis.get(lockKey(plan.protocolId)), null, 'the lock is given back');
    });
  }

  it('property: two or three replicas, each started at a random point of another’s apply (seeded)', async function () {
    const rng = new Rng(0x5eed27);
    const spellings = (): string[] => {
      const port = new URL(sim.baseUrl).port;
      return [`${sim.baseUrl}|`, `http://localhost:${port}/|${sim.instrumentUrl}`, `HTTP://127.0.0.1:${port}|`];
    };
    for (let round = 0; round < 16; round++) {
      const count = rng.int(2, 3);
      const replicas: Replica[] = Array.from({ length: count }, (_, i) => ({ name: `r${i}`, client: make(), writes: 0 }));
      const plan = await protocolAndPlan(replicas[0].client, `prop-${round}`, [
        ['Lid', 'LidStep'],
        ['Pause 2', 'PauseStep', 9],
        ['New', 'HepaStep'],
      ]);
      for (const r of replicas) await r.client.runs.status();
      sim.setFaults({ latencyMs: rng.int(0, 25) });
      const outcomes: Promise<Outcome>[] = [];
      const ended: boolean[] = replicas.map(() => false);
      const start = (i: number): void => {
        const locks = replicaLocks(replicas[i].name, rng.pick(spellings()));
        outcomes[i] = startApply(replicas[i], plan, locks).then((o) => {
          ended[i] = true;
          return o;
        });
      };
      // how each replica after the first starts: at once, before write k of an earlier one, or when it has ended
      const triggers: string[] = [];
      const pending: (() => void)[] = [];
      for (let i = 1; i < count; i++) {
        const j = rng.below(i);
        const how = rng.weighted({ now: 1, write: 3, end: 1 });
        const k = rng.below(plan.changes.length);
        triggers.push(
          how === 'now' ? `r${i} at once` : how === 'write' ? `r${i} before r${j}'s write ${k}` : `r${i} after r${j}`,
        );
        if (how === 'now') pending.push(() => start(i));
        else {
          let started = false;
          const go = (): void => {
            if (started) return;
            started = true;
            start(i);
          };
          const before = replicas[j].beforeWrite;
          if (how === 'write')
            replicas[j].beforeWrite = async (index) => {
              await before?.(index);
              if (index === k) go();
            };
          // also when j never reaches write k (refused), and for "after j"
          pending.push(() => void waitFor(j).then(go));
        }
      }
      const waitFor = async (j: number): Promise<void> => {
        await until(() => outcomes[j] !== undefined, `r${j} started`, 20000);
        await outcomes[j];
      };
      start(0);
      for (const p of pending) p();
      await until(() => outcomes.filter(Boolean).length === count, 'every replica started', 20000);
      const settled = await Promise.all(outcomes);
      sim.setFaults({});
      const story = `round ${round}: ${triggers.join(', ')} → ${settled.map(String).join(' | ')}`;
      assert.equal(settled.filter((o) => o === 'applied').length, 1, `exactly one applies (${story})`);
      settled.forEach((o, i) => {
        if (o === 'applied') return assert.equal(replicas[i].writes, plan.changes.length, story);
        assert.ok(o instanceof LhError && (o.kind === 'busy' || o.kind === 'changed'), `refused, busy or changed (${story})`);
        assert.equal(replicas[i].writes, 0, `a refused apply wrote nothing (${story})`);
      });
      const after = await readProtocol(replicas[0].client.runs, plan.protocolId, 'plan');
      assert.equal(after.digest, plan.target, `the protocol is the target (${story})`);
      requireUniqueNames(after, 'plan');
      assert.equal(await db.redis.get(lockKey(plan.protocolId)), null, `no lock left (${story})`);
      assert.ok(ended.every(Boolean));
    }
  });

  it('a replica killed mid-apply: others are refused until its lock expires, then the plan applies once', async function () {
    const killed: Replica = { name: 'killed', client: make(), writes: 0 };
    const other: Replica = { name: 'other', client: make(), writes: 0 };
    const plan = await protocolAndPlan(killed.client, 'kill', [
      ['Pause', 'PauseStep', 5],
      ['Lid', 'LidStep'],
      ['New', 'HepaStep'],
    ]);
    // killed at its first write (before sending it): no renewal, no release, its Redis connection gone silent
    let alive = true;
    const silent: RedisLike = {
      eval: (...args) => (alive ? db.redis.eval(...args) : new Promise(() => undefined)),
      get: (key) => db.redis.get(key),
    };
    const kill = new ApplyLocks(silent, new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`), killed.name, { ttlMs: 400 });
    let atWrite!: () => void;
    const reached = new Promise<void>((resolve) => (atWrite = resolve));
    killed.beforeWrite = () => {
      alive = false;
      atWrite();
      return new Promise(() => undefined); // the process is gone: this apply never goes on
    };
    void startApply(killed, plan, kill);
    await reached;
    const refused = await startApply(other, plan, replicaLocks(other.name));
    assert.ok(refused instanceof LhError && refused.kind === 'busy', String(refused));
    assert.match(
      refused.message,
      /another Node-RED \(killed\) is applying a plan to it: nothing was written.*expires within 1 s/,
    );
    assert.equal(other.writes, 0);
    await until(async () => (await db.redis.get(lockKey(plan.protocolId))) === null, 'the lock expired', 5000);
    assert.equal(await startApply(other, plan, replicaLocks(other.name)), 'applied');
    const after = await readProtocol(other.client.runs, plan.protocolId, 'plan');
    assert.equal(after.digest, plan.target);
  });

  it('a lock lost mid-apply (the key expired or Redis lost it) stops the apply before its next write, saying so', async function () {
    const r: Replica = { name: 'r', client: make(), writes: 0 };
    const plan = await protocolAndPlan(r.client, 'lost', [
      ['Pause', 'PauseStep', 7],
      ['New', 'HepaStep'],
    ]);
    assert.ok(plan.changes.length >= 3, plan.changes.map((c) => c.action).join());
    r.afterWrite = async (index) => {
      if (index === 0) await db.redis.del(lockKey(plan.protocolId)); // gone after the first write
    };
    const stopped = await startApply(r, plan, replicaLocks(r.name));
    assert.ok(stopped instanceof ApplyStopped, String(stopped));
    assert.equal(stopped.kind, 'busy');
    assert.equal(stopped.applied.length, 1);
    assert.equal(stopped.notApplied.length, plan.changes.length - 1);
    assert.match(
      stopped.message,
      new RegExp(
        `^apply of plan ${plan.id} stopped at .*: protocol ${plan.protocolId}: the lock this apply held in Redis was lost \\(it expired, or Redis lost it.*\\): another Node-RED may be applying a plan to it now, so this apply stopped before its next write\\. Applied \\(1\\)`,
      ),
    );
    assert.equal(r.writes, 1, 'the second write was not made');
    const after = await readProtocol(r.client.runs, plan.protocolId, 'plan');
    assert.equal(after.export.steps.length, 1, 'only the first change (the delete) was made');
  });

  it('Redis down mid-apply stops the apply before its next write; Redis down at the start refuses it, nothing written', async function () {
    const r: Replica = { name: 'r', client: make(), writes: 0 };
    const plan = await protocolAndPlan(r.client, 'down', [
      ['Pause', 'PauseStep', 7],
      ['New', 'HepaStep'],
    ]);
    const own = new Redis(db.harness.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    try {
      await new Promise((resolve) => own.once('ready', resolve));
      const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
      r.afterWrite = (index) => {
        if (index === 0) own.disconnect();
      };
      const stopped = await startApply(r, plan, new ApplyLocks(own, keys, r.name));
      assert.ok(stopped instanceof ApplyStopped, String(stopped));
      assert.equal(stopped.kind, 'network');
      assert.match(stopped.message, /the lock this apply held in Redis was lost \(Redis could not be reached to renew it: /);
      assert.doesNotMatch(stopped.message, /The instrument did not answer/);
      assert.equal(stopped.applied.length, 1);

      const again: Replica = { name: 'again', client: make(), writes: 0 };
      const plan2 = await protocolAndPlan(again.client, 'down-start', [['Pause', 'PauseStep', 7]]);
      const requests = sim.requests.length;
      const refused = await startApply(again, plan2, new ApplyLocks(own, keys, again.name));
      assert.ok(refused instanceof LhError && refused.kind === 'network', String(refused));
      assert.match(
        refused.message,
        new RegExp(
          `^protocol ${plan2.protocolId}: the apply lock shared by the Node-REDs cannot be reached in Redis \\(.+\\): nothing was written`,
        ),
      );
      assert.equal(again.writes, 0);
      assert.equal(sim.requests.length, requests, 'not even the base was read');
    } finally {
      own.disconnect();
    }
  });

  it('renewed every third of its TTL while held (compare-and-extend); a failed renewal or a pause past it loses it', async function () {
    const renewals: Promise<unknown>[] = [];
    const recording: RedisLike = {
      eval: (script, numKeys, ...args) => {
        const reply = db.redis.eval(script, numKeys, ...args);
        if (script === RENEW) renewals.push(reply);
        return reply;
      },
      get: (key) => db.redis.get(key),
    };
    let now = 0;
    const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
    const locks = new ApplyLocks(recording, keys, 'r', { ttlMs: 30_000, now: () => now });
    const clock = fakeTimeouts();
    const held = await locks.take(7, 'apply');
    for (let i = 1; i <= 3; i++) {
      now += 10_000;
      await clock.tickAsync(10_000);
      assert.equal(renewals.length, i, `renewal ${i}`);
      assert.equal(Number(await renewals[i - 1]), 1);
    }
    await held.confirm(); // still ours after three TTL-thirds (a lock not renewed would have lived 30 s)
    assert.ok(Number(await db.redis.pttl(keys.applyLock(7))) > 29_000, 'extended to a full TTL');
    // a renewal that finds the key gone (it expired, Redis lost it) loses it: confirm refuses without asking again
    await db.redis.del(keys.applyLock(7));
    now += 10_000;
    await clock.tickAsync(10_000);
    assert.equal(renewals.length, 5); // four timer renewals and confirm's own
    assert.equal(Number(await renewals[4]), 0);
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(held.confirm(), /the lock this apply held in Redis was lost \(it expired/);
    assert.equal(renewals.length, 5, 'the timer’s renewal told it: confirm did not ask again');
    await held.release();

    // a process paused past the TTL (no timer ran): confirm refuses though the key is still there
    const paused = await locks.take(8, 'apply');
    now += 30_000;
    await assert.rejects(paused.confirm(), /the lock this apply held in Redis was lost \(its last renewal is older than its TTL/);
    await paused.release();
    assert.equal(await db.redis.get(keys.applyLock(8)), null, 'given back by compare-and-delete');
  });

  it('a lock held by another value is never given back by this apply (compare-and-delete)', async function () {
    const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
    const held = await new ApplyLocks(db.redis, keys, 'r', { ttlMs: 30_000 }).take(9, 'apply');
    await db.redis.set(keys.applyLock(9), 'someone-else:x', 'PX', 30_000); // it expired and another took it
    await held.release();
    assert.equal(await db.redis.get(keys.applyLock(9)), 'someone-else:x');
  });
});
