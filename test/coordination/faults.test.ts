/**
 * Several real Node-RED processes and a real Redis under the faults of issue 29: replicas whose flows list different
 * instruments (and spell one instrument's URL differently), Redis losing its data (FLUSHALL) while the holder
 * hiccups, and a holder killed while the msg it recorded is still on its way through its flow.
 */
import assert from 'assert';

import { CoordinationKeys } from '../../src/coordination/keys';
import { Simulator } from '../../src/simulator';
import { Collected, credentialsFor, FlowNode, leaseHolder, Replica, useReplicaFleet, watchFlows } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { startSimulator } from '../support/runtime';
import { until } from '../support/until';

const LEASE_S = 2;
const INTERVAL_S = 0.5;

type Event = Collected;

describeWithRedis('coordination under faults (issue 29: findings 1, 2, 6)', function () {
  this.timeout(180000);
  const db = useRedis();
  const fleet = useReplicaFleet('faults');
  const { sims, replicas } = fleet;

  const events = (kind: string, id: string): Event[] =>
    (fleet.collector.events as Event[]).filter((e) => e.kind === kind && e.id === id);
  const unmarked = (kind: string, id: string): number => events(kind, id).filter((e) => !e.redelivered).length;

  async function sim(): Promise<Simulator> {
    const s = await startSimulator();
    sims.push(s);
    return s;
  }

  function flows(instruments: { id: string; baseUrl: string }[], edit: (f: FlowNode[]) => FlowNode[] = (f) => f): FlowNode[] {
    const base = watchFlows({
      redisUrl: db.harness.url,
      prefix: fleet.prefix,
      leaseSeconds: LEASE_S,
      instruments,
      collectorUrl: fleet.collector.url,
      interval: INTERVAL_S,
    });
    return edit(base);
  }

  it('replicas whose flows list different instruments, one spelled two ways: every instrument held by one replica, each error raised once', async function () {
    const x = await sim();
    const y = await sim();
    // r1 knows X and Y; r2 knows only X, spelled another way (localhost, a trailing slash): one instrument, one lease
    // an error is collected as `<id>@<port>`: the two simulators number their errors alike
    const byPort = (f: FlowNode[]): FlowNode[] =>
      f.map((n) =>
        typeof n.func === 'string'
          ? {
              ...n,
              func: n.func.replace(
                'id: String(msg.errorId ?? msg.uuid)',
                "id: String(msg.errorId ?? msg.uuid) + '@' + new URL(msg.instrument.baseUrl).port",
              ),
            }
          : n,
      );
    const r1 = new Replica(
      'r1',
      flows(
        [
          { id: 'x', baseUrl: x.baseUrl },
          { id: 'y', baseUrl: y.baseUrl },
        ],
        byPort,
      ),
      credentialsFor([{ id: 'x' }, { id: 'y' }]),
    );
    const xOther = `${x.baseUrl.replace('127.0.0.1', 'localhost')}/`;
    const r2 = new Replica('r2', flows([{ id: 'x', baseUrl: xOther }], byPort), credentialsFor([{ id: 'x' }]));
    replicas.push(r1, r2);
    await Promise.all(replicas.map((r) => r.start()));

    const errors: string[] = [];
    const port = (s: Simulator): string => new URL(s.baseUrl).port;
    for (let round = 0; round < 3; round++) {
      for (const s of [x, y]) errors.push(`${String(s.injectPendingError({ title: `round ${round}` }).id)}@${port(s)}`);
      // each error raised within two leases (+ a poll): nobody leaves an instrument unwatched
      await until(
        () => errors.every((e) => fleet.collector.count('raised', e) > 0),
        `round ${round}: every error of X and Y raised`,
        2 * LEASE_S * 1000 + 8000,
      );
    }
    for (const e of errors)
      assert.equal(fleet.collector.count('raised', e), 1, `error ${e} raised once: ${JSON.stringify(events('raised', e))}`);
    // both spellings of X name one lease, and X and Y are held (within two leases: a handover may be under way)
    const held = async (baseUrl: string): Promise<Replica | undefined> =>
      leaseHolder(db.redis, fleet.prefix, { baseUrl }, replicas);
    await until(
      async () => {
        const [a, b, c] = [await held(xOther), await held(x.baseUrl), await held(y.baseUrl)];
        return a !== undefined && a === b && c !== undefined;
      },
      'X (one lease for both spellings) and Y held',
      2 * LEASE_S * 1000 + 2000,
    );
    const keys = new CoordinationKeys(fleet.prefix);
    assert.equal(await db.redis.zcard(keys.instruments), 2, 'the group knows two instruments');
  });

  it('Redis loses its data (FLUSHALL) while the holder hiccups: a pending error raised again is marked, fencing tokens never go back', async function () {
    const s = await sim();
    const instruments = [{ id: 'i1', baseUrl: s.baseUrl }];
    const f = flows(instruments);
    replicas.push(new Replica('r1', f, credentialsFor(instruments)), new Replica('r2', f, credentialsFor(instruments)));
    await Promise.all(replicas.map((r) => r.start()));
    const keys = new CoordinationKeys(fleet.prefix).instrument(`${s.baseUrl}|`);
    await until(
      async () => (await leaseHolder(db.redis, fleet.prefix, { baseUrl: s.baseUrl }, replicas)) !== undefined,
      'a holder',
      10000,
    );

    const first = String(s.injectPendingError({ title: 'pending before the loss' }).id);
    await until(() => fleet.collector.count('raised', first) > 0, 'the error raised', 10000);
    const holder = await leaseHolder(db.redis, fleet.prefix, { baseUrl: s.baseUrl }, replicas);
    assert.ok(holder);
    // both replicas have made a round (a replica that never reached Redis before the loss cannot tell it from a start)
    const group = new CoordinationKeys(fleet.prefix);
    await until(async () => (await db.redis.hlen(group.holding)) === 2, 'both replicas in the group', 10000);
    const before = Number((await db.redis.get(keys.lease))?.split(':')[0]);

    holder.pause(); // a hiccup shorter than a lease…
    await db.redis.flushall(); // …while Redis loses everything (a restart without persistence)
    await until(
      async () => {
        const h = await leaseHolder(db.redis, fleet.prefix, { baseUrl: s.baseUrl }, replicas);
        return h !== undefined && h !== holder;
      },
      'the other replica takes the lease',
      4 * LEASE_S * 1000,
    );
    holder.resume();
    const after = Number((await db.redis.get(keys.lease))?.split(':')[0]);
    assert.ok(after > before, `the fencing token grows after the loss (${before} → ${after})`);

    // a new error after the takeover: once it is raised, the new holder has decided on the first one too
    const second = String(s.injectPendingError({ title: 'new after the loss' }).id);
    await until(() => fleet.collector.count('raised', second) > 0, 'the new error raised', 10000);
    assert.equal(unmarked('raised', first), 1, `raised once unmarked: ${JSON.stringify(events('raised', first))}`);
    for (const e of events('raised', first).slice(1))
      assert.equal(e.redelivered, 'shared-memory-lost', 'raised again only marked as a redelivery');

    // and it still resolves (once, or again marked)
    s.resolvePendingError(first);
    await until(() => fleet.collector.count('resolved', first) > 0, 'the resolution', 10000);
    assert.ok(unmarked('resolved', first) <= 1);
  });

  it('the holder killed while the msg it recorded is still in its flow: the next holder raises it again, marked', async function () {
    const s = await sim();
    const instruments = [{ id: 'i1', baseUrl: s.baseUrl }];
    const keys = new CoordinationKeys(fleet.prefix).instrument(`${s.baseUrl}|`);
    // r1's raised msgs wait in a delay node (an e-mail being sent) before they reach the fleet.collector
    const slow = flows(instruments, (f) => [
      ...f.map((n) => (n.id === 'to-raised' ? { ...n, wires: [['hold']] } : n)),
      { id: 'hold', type: 'delay', z: 'tab', pauseType: 'delay', timeout: '60', timeoutUnits: 'seconds', wires: [['post']] },
    ]);
    const r1 = new Replica('r1', slow, credentialsFor(instruments));
    replicas.push(r1);
    await r1.start();
    await until(
      async () => (await leaseHolder(db.redis, fleet.prefix, { baseUrl: s.baseUrl }, replicas)) === r1,
      'r1 holds',
      10000,
    );
    const r2 = new Replica('r2', flows(instruments), credentialsFor(instruments));
    replicas.push(r2);
    await r2.start();

    const id = String(s.injectPendingError({ title: 'in flight when the holder dies' }).id);
    const seen = keys.shared('seen:poll-i1');
    await until(async () => Object.keys(await db.redis.hgetall(seen)).length > 0, 'r1 recorded the error as raised', 10000);
    await r1.kill(); // the msg was in r1's flow: gone with it
    assert.equal(fleet.collector.count('raised', id), 0, 'nothing reached the fleet.collector from r1');

    await until(() => fleet.collector.count('raised', id) > 0, 'the next holder raises it again', 4 * LEASE_S * 1000 + 5000);
    const [again] = events('raised', id);
    assert.equal(again.replica, 'r2');
    assert.equal(again.redelivered, 'holder-stopped', 'marked as a redelivery');

    s.resolvePendingError(id);
    await until(() => fleet.collector.count('resolved', id) > 0, 'its resolution', 10000);
    assert.equal(fleet.collector.count('resolved', id), 1);
  });
});
