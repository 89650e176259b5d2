/**
 * Redis Cluster: the group's epoch (one global key) and an instrument's keys (its hash tag) live on different masters
 * as a rule. The master holding the instrument's keys crashes and comes back from a snapshot older than its last
 * writes, while the epoch's master runs on: the run id read with the epoch does not change, the write sequence the
 * other replica knew looks as it was. The run id of the master holding the instrument's keys must tell it. Two real
 * redis-servers stand for the two masters; the replicas reach them through one client that routes each command by
 * its key as a Cluster client does (an instrument's keys to one, the group's keys to the other).
 */
import assert from 'assert';
import fs from 'fs';
import path from 'path';

import Redis from 'ioredis';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { ACQUIRE } from '../../src/coordination/scripts';
import { StoreRedis } from '../../src/coordination/stores';
import {
  GateNode as Node,
  holderOf,
  INSTRUMENT,
  pollGate as poll,
  Rec,
  Sent,
  startGateNode,
  unmarked,
} from '../support/gate-replicas';
import { describeWithRedis, RedisHarness } from '../support/redis-server';

/**
 * One client over two masters: a command goes to `tagged` when its (first) key has an instrument's hash tag.
 * `hooks.beforeAcquire`, when set, runs once before the next lease acquire is sent.
 */
function routed(global: Redis, tagged: Redis, hooks: { beforeAcquire?: () => Promise<void> }): StoreRedis {
  const pick = (key: unknown): Redis => (typeof key === 'string' && key.includes(':i:{') ? tagged : global);
  return new Proxy(global, {
    get(target, prop) {
      const own = Reflect.get(target, prop) as unknown;
      if (typeof own !== 'function') return own;
      return (...args: unknown[]): unknown => {
        // eval(script, numKeys, ...keys, ...args): by its first key; any other command: by its first argument
        const key = prop === 'eval' ? (Number(args[1]) > 0 ? args[2] : undefined) : args[0];
        const node = pick(key);
        const hook = prop === 'eval' && args[0] === ACQUIRE ? hooks.beforeAcquire : undefined;
        if (hook) {
          hooks.beforeAcquire = undefined;
          return hook().then(() => (Reflect.get(node, prop) as (...a: unknown[]) => unknown).apply(node, args));
        }
        return (Reflect.get(node, prop) as (...a: unknown[]) => unknown).apply(node, args);
      };
    },
  }) as unknown as StoreRedis;
}

describeWithRedis('coordination: a Cluster master holding an instrument restored from a stale snapshot', function () {
  this.timeout(60000);
  const epochNode = new RedisHarness();
  const instrumentNode = new RedisHarness();
  let global: Redis;
  let tagged: Redis;
  let dir = '';
  let run = 0;
  const hooks: { beforeAcquire?: () => Promise<void> } = {};
  const coordinators: Coordinator[] = [];

  before(async function () {
    if (epochNode.external) this.skip(); // the test restarts a server on an older dump
    await epochNode.start();
    await instrumentNode.start();
    global = new Redis(epochNode.url, { maxRetriesPerRequest: null });
    tagged = new Redis(instrumentNode.url, { maxRetriesPerRequest: null });
    dir = String(((await tagged.config('GET', 'dir')) as string[])[1]);
  });
  after(async function () {
    global?.disconnect();
    tagged?.disconnect();
    await epochNode.destroy();
    await instrumentNode.destroy();
  });
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
  });

  async function snapshot(): Promise<string> {
    await tagged.save();
    const copy = path.join(dir, `old-${++run}.rdb`);
    fs.copyFileSync(path.join(dir, 'dump.rdb'), copy);
    return copy;
  }

  /** The instrument's master killed (nothing saved) and restarted on the older dump; the epoch's runs on. */
  async function restartFrom(copy: string): Promise<void> {
    await instrumentNode.stop();
    fs.copyFileSync(copy, path.join(dir, 'dump.rdb'));
    await instrumentNode.start();
    await tagged.ping();
  }

  const start = (prefix: string, name: string): Node => startGateNode(routed(global, tagged, hooks), prefix, name, coordinators);

  /**
   * The holder's last write lost with the instrument's master, the holder gone: the other replica takes over.
   * `midRound`: the master comes back from the older snapshot during the other's round, just before its grant.
   */
  async function takeover(prefix: string, midRound: boolean): Promise<Sent[]> {
    const nodes = [start(prefix, 'r0'), start(prefix, 'r1')];
    const { holder, other } = await holderOf(nodes);
    const listed = new Map<string, Rec>([['e1', { id: 'e1', title: 'clot' }]]);
    const sent: Sent[] = [];
    await poll(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();
    const group = new CoordinationKeys(prefix);
    const keys = group.instrument(INSTRUMENT);
    const old = await snapshot(); // e1 raised and settled; the other replica's last round read everything up to here
    listed.set('e2', { id: 'e2', title: 'door open' });
    await poll(holder, listed, sent); // e2 raised: no other replica reads the write sequence before the crash

    holder.link.down = true;
    const crash = async (): Promise<void> => {
      await restartFrom(old);
      await tagged.del(keys.lease); // the restore took longer than the lease
      await tagged.zrem(keys.watchers, holder.coordinator.replica);
    };
    if (midRound) await tagged.del(keys.lease); // a free lease, so that the other's next round takes it
    await global.zrem(group.replicas, holder.coordinator.replica);
    await global.hdel(group.holding, holder.coordinator.replica);
    if (midRound) hooks.beforeAcquire = crash;
    else await crash();
    for (let i = 0; i < 3 && other.coordinator.held().length === 0; i++) await other.coordinator.round();
    assert.equal(other.coordinator.held().length, 1, 'the other replica holds the instrument');
    await poll(other, listed, sent);

    const show = JSON.stringify(sent);
    assert.equal(unmarked(sent, 'e1').length, 1, `e1 raised once unmarked: ${show}`);
    assert.equal(unmarked(sent, 'e2').length, 1, `e2 raised once unmarked: ${show}`);
    assert.deepEqual(
      sent.filter((s) => s.id === 'e2').map((s) => [s.by, s.redelivered]),
      [
        [holder.coordinator.replica, undefined],
        [other.coordinator.replica, 'shared-memory-lost'],
      ],
      show,
    );
    return sent;
  }

  it("the instrument's master restarted, the epoch's did not: raised again only marked", async function () {
    await takeover(`lh-node-${process.pid}-${++run}`, false);
  });

  it('the restart between the round start and the grant: the grant is a recovery', async function () {
    // the other replica's round reads the epoch and the write sequences before the instrument's master comes back
    // from the older snapshot; its grant comes after
    await takeover(`lh-node-${process.pid}-${++run}`, true);
    assert.equal(hooks.beforeAcquire, undefined, 'the restart came between the round start and the grant');
  });
});
