/**
 * Redis restarts that lose nothing (saved just before), at random points among raises, resolutions and takeovers
 * (seeded): c9501fa counts every new run id of the server as a possible loss. What that may cost is marking; never a
 * miss, an error raised twice unmarked, a resolution not sent, or an instrument that nobody holds. Real redis-server.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { GateNode as Node, INSTRUMENT, pollGate as poll, Rec, Sent, startGateNode } from '../support/gate-replicas';
import { Rng } from '../support/prng';
import { describeWithRedis, RedisHarness } from '../support/redis-server';

describeWithRedis('coordination: Redis restarts that lose nothing (seeded)', function () {
  this.timeout(120000);
  const harness = new RedisHarness();
  let redis: Redis;
  const coordinators: Coordinator[] = [];

  before(async function () {
    if (harness.external) this.skip(); // the test restarts the server
    await harness.start();
    redis = new Redis(harness.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined); // the restarts drop the connection: it reconnects
  });
  after(async function () {
    redis?.disconnect();
    await harness.destroy();
  });
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
  });

  const start = (prefix: string, name: string): Node => startGateNode(redis as unknown as StoreRedis, prefix, name, coordinators);

  /** Rounds until exactly one node holds the instrument; that node. */
  async function holder(nodes: Node[]): Promise<Node> {
    for (let i = 0; i < 5; i++) {
      for (const n of nodes) await n.coordinator.round();
      const holding = nodes.filter((n) => n.coordinator.held().length > 0);
      if (holding.length === 1) return holding[0];
    }
    throw new Error(`not one holder: ${nodes.map((n) => `${n.coordinator.replica} ${n.coordinator.held().length}`).join(', ')}`);
  }

  for (let seed = 1; seed <= 10; seed++) {
    it(`seed ${seed}: marking at most; no miss, no unmarked duplicate, every resolution sent`, async function () {
      const rng = new Rng(seed);
      const prefix = `lh-harmless-${process.pid}-${seed}`;
      const group = new CoordinationKeys(prefix);
      const keys = group.instrument(INSTRUMENT);
      const nodes = [start(prefix, 'r0'), start(prefix, 'r1')];
      const listed = new Map<string, Rec>();
      const sent: Sent[] = [];
      const steps: string[] = [];
      let next = 0;
      let restarts = 0;
      for (let step = 0; step < 14; step++) {
        const action = rng.weighted({ add: 4, remove: 2, restart: 3, takeover: 2 });
        steps.push(action);
        if (action === 'add') listed.set(`e${++next}`, { id: `e${next}`, title: `error ${next}` });
        if (action === 'remove' && listed.size > 0) listed.delete(rng.pick([...listed.keys()]));
        if (action === 'restart') {
          restarts++;
          await redis.save(); // nothing is lost
          await harness.stop();
          await harness.start();
          await redis.ping();
        }
        if (action === 'takeover') {
          // the holder pauses past its lease: the other replica takes over (the old one comes back as standby)
          const old = await holder(nodes);
          old.link.down = true;
          await redis.del(keys.lease);
          await redis.zrem(group.replicas, old.coordinator.replica);
          await redis.hdel(group.holding, old.coordinator.replica);
          await redis.zrem(keys.watchers, old.coordinator.replica);
          const other = nodes.find((n) => n !== old) as Node;
          for (let i = 0; i < 3 && other.coordinator.held().length === 0; i++) await other.coordinator.round();
          old.link.down = false;
        }
        await poll(await holder(nodes), listed, sent);
      }
      const show = `steps ${steps.join(' ')} (${restarts} restarts): ${JSON.stringify(sent)}`;
      for (let i = 1; i <= next; i++) {
        const id = `e${i}`;
        const raised = sent.filter((s) => s.kind === 'raised' && s.id === id);
        assert.ok(raised.length >= 1, `${id} raised: ${show}`);
        assert.ok(raised.filter((s) => !s.redelivered).length <= 1, `${id} raised at most once unmarked: ${show}`);
        if (!listed.has(id))
          assert.ok(
            sent.some((s) => s.kind === 'resolved' && s.id === id),
            `${id} resolved: ${show}`,
          );
      }
    });
  }
});
