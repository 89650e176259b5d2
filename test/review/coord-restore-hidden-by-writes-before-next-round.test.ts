/**
 * Review finding (coordination after Redis loses writes): a replica tells a restore from an older snapshot by the
 * instrument's write sequence being lower than it knew, read once a round. A holder that writes a few times between
 * the restore and its next round (a burst of new errors) pushed the sequence back above what it knew: the loss went
 * unseen, the holder wrote nothing back, and the next holder raised again, unmarked, what the snapshot had lost.
 * A write whose sequence is not above what the replica knew when it sent it is a loss too (Redis only counts up).
 * Real Redis; the restore is done on the keys it changes (the seen field written after the snapshot, the sequence).
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { ErrorGate, GateItem } from '../../src/coordination/error-gate';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Rec {
  id: string;
  title: string;
}

const INSTRUMENT = 'http://127.0.0.1:9|';

interface Replica {
  coordinator: Coordinator;
  gate: ErrorGate<Rec>;
  memory: Map<string, Rec>;
}

interface Sent {
  kind: 'raised' | 'resolved';
  id: string;
  redelivered?: string;
}

describeWithRedis('review: a restore the holder writes over before its next round', function () {
  this.timeout(60000);
  const db = useRedis();
  const coordinators: Coordinator[] = [];
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
  });

  function start(prefix: string, name: string): Replica {
    const coordinator = new Coordinator({ redis: db.redis as unknown as StoreRedis, prefix, leaseMs: 60000, replica: name });
    coordinators.push(coordinator);
    coordinator.join(INSTRUMENT);
    return {
      coordinator,
      gate: coordinator.errorGate<Rec>(INSTRUMENT, 'poll', { keyOf: (_s: string, r: Rec) => r.id }),
      memory: new Map(),
    };
  }

  async function poll(n: Replica, listed: Map<string, Rec>, sent: Sent[]): Promise<void> {
    const raised: GateItem<Rec>[] = [...listed.values()]
      .filter((r) => !n.memory.has(r.id))
      .map((r) => ({ source: 'A', record: r }));
    const resolved: GateItem<Rec>[] = [...n.memory.values()]
      .filter((r) => !listed.has(r.id))
      .map((r) => ({ source: 'A', record: r }));
    for (const r of raised) n.memory.set(r.record.id, r.record);
    for (const r of resolved) n.memory.delete(r.record.id);
    await n.gate.filter(raised, resolved, new Map([['A', new Map([...listed].map(([id, r]) => [id, [r]]))]]), (list, item) =>
      sent.push({ kind: list, id: item.record.id, ...(item.redelivered ? { redelivered: item.redelivered } : {}) }),
    );
  }

  it('what the restore lost is never raised again unmarked by the next holder', async function () {
    const prefix = `lh-review-restore-${process.pid}`;
    const nodes = [start(prefix, 'r0'), start(prefix, 'r1')];
    let holder: Replica | undefined;
    for (let i = 0; i < 5 && !holder; i++) {
      for (const n of nodes) await n.coordinator.round();
      holder = nodes.find((n) => n.coordinator.held().length > 0);
    }
    assert.ok(holder, 'one replica holds the instrument');
    const other = nodes.find((n) => n !== holder) as Replica;
    const keys = new CoordinationKeys(prefix).instrument(INSTRUMENT);
    const hash = keys.shared('seen:poll');

    const listed = new Map<string, Rec>([['e1', { id: 'e1', title: 'clot' }]]);
    const sent: Sent[] = [];
    await poll(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();
    // the snapshot: e1 recorded, the sequence as now
    const seqAtSnapshot = String(await db.redis.get(keys.seq));
    const fieldsAtSnapshot = new Set(Object.keys(await db.redis.hgetall(hash)));
    listed.set('e2', { id: 'e2', title: 'door open' });
    await poll(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();

    // Redis restored from the snapshot: e2's record and the writes since are gone (lease, epoch and fence as they were)
    for (const field of Object.keys(await db.redis.hgetall(hash)))
      if (!fieldsAtSnapshot.has(field)) await db.redis.hdel(hash, field);
    await db.redis.set(keys.seq, seqAtSnapshot);
    // a burst of new errors before the holder's next round
    for (const id of ['e3', 'e4', 'e5']) listed.set(id, { id, title: `error ${id}` });
    await poll(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();
    await poll(holder, listed, sent);
    for (const n of nodes) await n.coordinator.round();

    // it hands over: the next holder decides on what Redis holds
    await holder.coordinator.close();
    for (let i = 0; i < 3 && other.coordinator.held().length === 0; i++) await other.coordinator.round();
    assert.equal(other.coordinator.held().length, 1, 'the other replica holds the instrument');
    await poll(other, listed, sent);
    await poll(other, listed, sent);

    const show = JSON.stringify(sent);
    for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) {
      const unmarked = sent.filter((s) => s.kind === 'raised' && s.id === id && !s.redelivered);
      assert.equal(unmarked.length, 1, `${id} raised once unmarked: ${show}`);
    }
  });
});
