/**
 * A hostile pass over the coordination fixes of issue 29: one replica's clock jumping, a replica that knows no
 * instrument, one instrument spelled three ways, Redis restarting while a raise is on its way. Real Redis, real
 * coordinators and gates (each replica's own memory is the poll node's, SeenErrors), clocks injected.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { ErrorGate, GateItem } from '../../src/coordination/error-gate';
import { CoordinationKeys } from '../../src/coordination/keys';
import { FENCED_SEEN_RAISE } from '../../src/coordination/scripts';
import { StoreRedis } from '../../src/coordination/stores';
import { SeenErrors } from '../../src/nodes/lh-error-poll/seen-errors';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

interface Rec {
  id: string;
  title: string;
}

const rules = { keyOf: (_source: string, r: Rec): string => r.id };
const idOf = (r: Rec): string => r.id;
const all = (): boolean => true;

interface Replica {
  coordinator: Coordinator;
  gate: ErrorGate<Rec>;
  memory: SeenErrors;
  clock: { offset: number };
}

interface Sent {
  kind: 'raised' | 'resolved';
  error: string;
  by: string;
  redelivered?: string;
}

describeWithRedis('coordination: hostile pass (issue 29)', function () {
  this.timeout(60000);
  const db = useRedis();
  let run = 0;
  const coordinators: Coordinator[] = [];
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
  });

  /**
   * A replica joined to the instrument, after the round its join starts by itself (a test's own rounds never run beside
   * it: two rounds of one coordinator at once, which a busy machine made likely, step each other's state).
   */
  async function start(
    prefix: string,
    name: string,
    instrument: string,
    redis = db.redis as unknown as StoreRedis,
  ): Promise<Replica> {
    const clock = { offset: 0 };
    const coordinator = new Coordinator({
      redis,
      prefix,
      leaseMs: 60000,
      replica: name,
      now: () => Date.now() + clock.offset,
    });
    coordinators.push(coordinator);
    const joined = coordinator.join(instrument);
    await until(() => joined.state.role !== 'joining', `${name}: its first round`, 10_000);
    return { coordinator, gate: coordinator.errorGate<Rec>(instrument, 'poll', rules), memory: new SeenErrors(), clock };
  }

  /** One poll as lh-error-poll makes it: the node's memory proposes, the gate decides. */
  async function poll(r: Replica, listed: Rec[], sent: Sent[]): Promise<void> {
    if (!r.gate.active) return;
    const diff = r.memory.update(listed, idOf, all);
    const item = (record: Rec): GateItem<Rec> => ({ source: 'A', record });
    const byKey = new Map<string, Rec[]>();
    for (const rec of listed) byKey.set(rec.id, [...(byKey.get(rec.id) ?? []), rec]);
    await r.gate.filter(diff.raised.map(item), diff.resolved.map(item), new Map([['A', byKey]]), (kind, it) =>
      sent.push({
        kind,
        error: it.record.id,
        by: r.coordinator.replica,
        ...(it.redelivered ? { redelivered: it.redelivered } : {}),
      }),
    );
  }

  it("the holder's clock jumps forward between its check and its poll's decision: nothing it saw is lost", async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const instrument = 'http://127.0.0.1:9|';
    const r = await start(prefix, 'r0', instrument);
    await r.coordinator.round();
    assert.ok(r.gate.active, 'it holds the instrument');
    const sent: Sent[] = [];
    await poll(r, [{ id: '1', title: 'clot' }], sent);
    // the poll starts as the holder; the clock jumps an hour forward while the instrument answers (NTP stepping)
    const diff = r.memory.update(
      [
        { id: '1', title: 'clot' },
        { id: '2', title: 'door open' },
      ],
      idOf,
      all,
    );
    r.clock.offset = 3600_000;
    await r.gate.filter(
      diff.raised.map((record) => ({ source: 'A', record })),
      [],
      new Map([
        [
          'A',
          new Map([
            ['1', [{ id: '1', title: 'clot' }]],
            ['2', [{ id: '2', title: 'door open' }]],
          ]),
        ],
      ]),
      (kind, it) => sent.push({ kind, error: it.record.id, by: 'r0' }),
    );
    // its next round renews the lease (the same token), and it polls on
    await r.coordinator.round();
    await poll(
      r,
      [
        { id: '1', title: 'clot' },
        { id: '2', title: 'door open' },
      ],
      sent,
    );
    await poll(r, [{ id: '1', title: 'clot' }], sent);
    assert.deepEqual(
      sent.map((s) => [s.kind, s.error, s.redelivered]),
      [
        ['raised', '1', undefined],
        ['raised', '2', undefined],
        ['resolved', '2', undefined],
      ],
    );
  });

  it("the holder's clock jumps back: it keeps believing it holds, but sends nothing once another holds the lease", async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const instrument = 'http://127.0.0.1:9|';
    const a = await start(prefix, 'a', instrument);
    await a.coordinator.round();
    const b = await start(prefix, 'b', instrument);
    await b.coordinator.round();
    assert.ok(a.gate.active && !b.gate.active);
    const sent: Sent[] = [];
    await poll(a, [{ id: '1', title: 'clot' }], sent);
    a.clock.offset = -3600_000; // an hour back: by its clock its lease lasts an hour longer
    // Redis expires the lease on its own clock (a paused round): b takes over
    const keys = new CoordinationKeys(prefix);
    await db.redis.del(keys.instrument(instrument).lease);
    // (a's share: b takes a lease beyond its own once it stayed free for a round)
    for (let i = 0; i < 3 && !b.gate.active; i++) await b.coordinator.round();
    assert.ok(b.gate.active, 'b holds the instrument');
    assert.ok(a.gate.active, 'a still believes it holds it');
    const listed = [
      { id: '1', title: 'clot' },
      { id: '2', title: 'door open' },
    ];
    await poll(a, listed, sent);
    await poll(b, listed, sent);
    await poll(a, [], sent);
    await poll(b, [], sent);
    // a's claim of 1 was never settled (no round since): b sends it again, marked; a sends nothing more
    assert.deepEqual(
      sent.map((s) => [s.kind, s.error, s.by, s.redelivered]),
      [
        ['raised', '1', 'a', undefined],
        ['raised', '1', 'b', 'holder-stopped'],
        ['raised', '2', 'b', undefined],
        ['resolved', '1', 'b', undefined],
        ['resolved', '2', 'b', undefined],
      ],
    );
  });

  it('a replica that knows no instrument (all its lh-server nodes removed) leaves none unwatched', async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const x = 'http://127.0.0.1:9|';
    // '0' sorts first: counted in the live replicas, its share of one instrument would be the one
    const zero = await start(prefix, '0', 'http://127.0.0.1:10|');
    await zero.coordinator.round();
    await zero.coordinator.leave('http://127.0.0.1:10|');
    const a = await start(prefix, 'a', x);
    const b = await start(prefix, 'b', x);
    const holders = (): string[] => [a, b].filter((r) => r.gate.active).map((r) => r.coordinator.replica);
    for (let i = 0; i < 3; i++) for (const c of [zero, a, b]) await c.coordinator.round();
    assert.equal(holders().length, 1, `X held by one replica: ${holders().join(', ')}`);
    // its holder dies: the other takes it within two rounds of its lease expiring
    const [gone] = [a, b].filter((r) => r.gate.active);
    const other = gone === a ? b : a;
    const keys = new CoordinationKeys(prefix);
    await gone.coordinator.close();
    await db.redis.del(keys.instrument(x).lease);
    for (let i = 0; i < 2; i++) for (const c of [zero, other]) await c.coordinator.round();
    assert.ok(other.gate.active, 'the other replica holds X');
  });

  it('one instrument spelled three ways on three replicas: one lease, one shared memory, each error once', async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const spellings = ['http://localhost:8080/|', 'HTTP://127.0.0.1:8080|', 'http://[::1]:8080//|'];
    const replicas: Replica[] = [];
    for (const [i, s] of spellings.entries()) replicas.push(await start(prefix, `r${i}`, s));
    const sent: Sent[] = [];
    for (let i = 0; i < 3; i++) for (const r of replicas) await r.coordinator.round();
    const holders = (): Replica[] => replicas.filter((r) => r.gate.active);
    assert.equal(holders().length, 1, 'one holder for every spelling');
    const listed = [{ id: '1', title: 'clot' }];
    await poll(holders()[0], listed, sent);
    // each takes its turn: the holder leaves, another spelling's replica takes over
    for (let turn = 0; turn < 2; turn++) {
      const h = holders()[0];
      await h.coordinator.close();
      replicas.splice(replicas.indexOf(h), 1);
      for (let i = 0; i < 3 && holders().length === 0; i++) for (const r of replicas) await r.coordinator.round();
      assert.equal(holders().length, 1, `turn ${turn}: one holder`);
      await poll(holders()[0], listed, sent);
    }
    await poll(holders()[0], [], sent);
    assert.deepEqual(
      sent.map((s) => [s.kind, s.error, s.redelivered]),
      [
        ['raised', '1', undefined],
        ['resolved', '1', undefined],
      ],
    );
  });

  it('Redis drops the connection after it recorded a raise, before the reply: sent marked, never again unmarked', async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const instrument = 'http://127.0.0.1:9|';
    // a's link: the first raise is applied in Redis, and its reply is lost with the connection
    let dropNext = true;
    const real = db.redis as unknown as StoreRedis;
    const flaky = new Proxy(real, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'eval') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (script: string, ...args: (string | number)[]) => {
          const reply = await target.eval(script, ...(args as [number, ...(string | number)[]]));
          if (script === FENCED_SEEN_RAISE && dropNext) {
            dropNext = false;
            throw new Error('Connection is closed. (test: Redis restarted)');
          }
          return reply;
        };
      },
    });
    const a = await start(prefix, 'a', instrument, flaky);
    await a.coordinator.round();
    const b = await start(prefix, 'b', instrument);
    await b.coordinator.round();
    const sent: (Sent & { lost?: boolean })[] = [];
    const listed = [{ id: '1', title: 'clot' }];
    const diff = a.memory.update(listed, idOf, all);
    await a.gate.filter(
      diff.raised.map((record) => ({ source: 'A', record })),
      [],
      new Map([['A', new Map([['1', listed]])]]),
      (kind, it) => sent.push({ kind, error: it.record.id, by: 'a', ...(it.lost ? { lost: true } : {}) }),
    );
    await a.coordinator.round();
    await poll(a, listed, sent);
    await a.coordinator.close(); // a hands over
    for (let i = 0; i < 3 && !b.gate.active; i++) await b.coordinator.round();
    await poll(b, listed, sent);
    await poll(b, [], sent);
    const raised = sent.filter((s) => s.kind === 'raised');
    assert.ok(raised.length >= 1, JSON.stringify(sent));
    assert.equal(raised[0].lost, true, `the first went out marked: ${JSON.stringify(sent)}`);
    for (const s of raised.slice(1)) assert.ok(s.redelivered, `raised again only marked: ${JSON.stringify(sent)}`);
    assert.equal(sent.filter((s) => s.kind === 'resolved').length, 1, `resolved once: ${JSON.stringify(sent)}`);
  });

  it("a replica's clock jumps forward after it saw Redis lose its data: the lease it takes next still recovers", async function () {
    const prefix = `lh-hostile-${process.pid}-${++run}`;
    const instrument = 'http://127.0.0.1:9|';
    const a = await start(prefix, 'a', instrument);
    await a.coordinator.round();
    const b = await start(prefix, 'b', instrument);
    await b.coordinator.round();
    assert.ok(a.gate.active && !b.gate.active);
    const sent: Sent[] = [];
    await poll(a, [{ id: '1', title: 'clot' }], sent);
    // Redis loses its data (the group's epoch and the seen-store gone, the lease and fence counter kept): b sees it
    const keys = new CoordinationKeys(prefix);
    await db.redis.del(keys.epoch, keys.instrument(instrument).shared('seen:poll'), keys.instrument(instrument).seq);
    await b.coordinator.round();
    // b's clock steps an hour forward; a dies; b takes the instrument over
    b.clock.offset = 3600_000;
    await a.coordinator.close();
    await db.redis.del(keys.instrument(instrument).lease);
    for (let i = 0; i < 3 && !b.gate.active; i++) await b.coordinator.round();
    assert.ok(b.gate.active, 'b holds the instrument');
    await poll(b, [{ id: '1', title: 'clot' }], sent);
    assert.deepEqual(
      sent.map((s) => [s.kind, s.error, s.by, s.redelivered]),
      [
        ['raised', '1', 'a', undefined],
        ['raised', '1', 'b', 'shared-memory-lost'],
      ],
    );
  });
});
