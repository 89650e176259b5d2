/**
 * Raised / resolved across replicas under kills, model-based (issue 29.6): seeded random sequences of errors
 * appearing and leaving, polls by the holder, rounds, and holders killed at any step (their unsettled claims left
 * behind, their lease expiring), on a real Redis with real coordinators and gates. Whatever the sequence: every
 * error a holder's poll listed is raised at least once and at most once unmarked; every error resolved after that
 * is resolved at least once and at most once unmarked; only a holder's unsettled claims are sent again.
 */
import assert from 'assert';

import fc from 'fast-check';

import { Coordinator } from '../../src/coordination/coordinator';
import { ErrorGate } from '../../src/coordination/error-gate';
import { StoreRedis } from '../../src/coordination/stores';
import { reachable } from '../support/redis-link';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Rec {
  id: string;
  title: string;
}

interface Node {
  coordinator: Coordinator;
  /** its Redis link: a killed replica's never reaches Redis again (its timers still run, as nothing would) */
  link: { down: boolean };
  gate: ErrorGate<Rec>;
  /** the fencing tokens it held */
  tokens: Set<number>;
  /** the poll node's own memory: what it reported raised and not yet resolved */
  memory: Map<string, Rec>;
}

const INSTRUMENT = 'http://127.0.0.1:9|';
const rules = { keyOf: (_source: string, r: Rec): string => r.id };

type Op =
  { kind: 'inject' } | { kind: 'resolve'; pick: number } | { kind: 'poll' } | { kind: 'round'; who: number } | { kind: 'kill' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'inject' as const }) },
  { weight: 2, arbitrary: fc.nat(20).map((pick) => ({ kind: 'resolve' as const, pick })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'poll' as const }) },
  { weight: 3, arbitrary: fc.nat(2).map((who) => ({ kind: 'round' as const, who })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'kill' as const }) },
);

describeWithRedis('coordination: raised / resolved at least once, never twice unmarked, under kills (model)', function () {
  this.timeout(180000);
  const db = useRedis();
  let run = 0;

  it('random errors, polls, rounds and kills of the holder', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 80 }), async (ops) => {
        const prefix = `lh-gate-model-${process.pid}-${++run}`;
        const redis = db.redis as unknown as StoreRedis;
        const all: Coordinator[] = [];
        let serial = 0;
        const start = (): Node => {
          const link = reachable(redis);
          const coordinator = new Coordinator({ redis: link.redis, prefix, leaseMs: 60000, replica: `r${serial++}` });
          all.push(coordinator);
          coordinator.join(INSTRUMENT);
          return {
            coordinator,
            link,
            tokens: new Set(),
            gate: coordinator.errorGate<Rec>(INSTRUMENT, 'poll', rules),
            memory: new Map(),
          };
        };
        const nodes: Node[] = [start(), start()];
        const listed = new Map<string, Rec>();
        let next = 0;
        const sent: { kind: 'raised' | 'resolved'; id: string; redelivered?: string; by: Node }[] = [];
        const seenListed = new Set<string>();
        const resolvedAfterSeen = new Set<string>();

        const trace: string[] = [];
        const poll = async (n: Node): Promise<void> => {
          if (!n.gate.active) return;
          const held = (n.gate as unknown as { coordination: { state: { token?: number } } }).coordination.state.token;
          if (held !== undefined) n.tokens.add(held);
          const raised = [...listed.values()].filter((r) => !n.memory.has(r.id)).map((r) => ({ source: 'A', record: r }));
          const resolved = [...n.memory.values()].filter((r) => !listed.has(r.id)).map((r) => ({ source: 'A', record: r }));
          for (const r of raised) n.memory.set(r.record.id, r.record);
          for (const r of resolved) n.memory.delete(r.record.id);
          const keys = new Map([['A', new Map([...listed].map(([id, r]) => [id, [r]]))]]);
          const ids = [...listed.keys()];
          trace.push(
            `  seen ${JSON.stringify(await db.redis.hgetall(n.coordinator.keys.instrument(INSTRUMENT).shared('seen:poll')))} token ${String((n.gate as unknown as { coordination: { state: { token?: number } } }).coordination.state.token)}`,
          );
          trace.push(
            `poll ${n.coordinator.replica} listed ${ids.join(',')} r=${raised.map((r) => r.record.id).join(',')} x=${resolved.map((r) => r.record.id).join(',')}`,
          );
          await n.gate.filter(raised, resolved, keys, (list, item) =>
            sent.push({ kind: list, id: item.record.id, by: n, ...(item.redelivered ? { redelivered: item.redelivered } : {}) }),
          );
          // a poll whose lease was lost meanwhile was fenced: it recorded nothing, and proves nothing was seen
          if (n.coordinator.held().length > 0) for (const id of ids) seenListed.add(id);
        };
        const holder = (): Node | undefined => nodes.find((n) => n.coordinator.held().length > 0);

        try {
          for (const n of nodes) await n.coordinator.round();
          for (const o of ops) {
            if (o.kind === 'inject') {
              const r = { id: `e${next++}`, title: 'clot' };
              listed.set(r.id, r);
            } else if (o.kind === 'resolve') {
              const ids = [...listed.keys()];
              if (ids.length === 0) continue;
              const id = ids[o.pick % ids.length];
              listed.delete(id);
              if (seenListed.has(id)) resolvedAfterSeen.add(id);
            } else if (o.kind === 'poll') {
              const h = holder();
              if (h) await poll(h);
            } else if (o.kind === 'round') {
              await nodes[o.who % nodes.length].coordinator.round();
            } else {
              // the holder killed: nothing settled or released; its lease expires (deleted here, as Redis would)
              const h = holder();
              if (!h) continue;
              trace.push(`kill ${h.coordinator.replica} unsettled ${h.gate.unsettled}`);
              nodes.splice(nodes.indexOf(h), 1);
              h.link.down = true;
              // the worst case: what it sent and had not settled in Redis was still in its flow, and is gone with it
              const k = h.coordinator.keys.instrument(INSTRUMENT);
              const claims = [
                ...Object.values(await db.redis.hgetall(k.shared('seen:poll'))).map((raw) => ['raised', raw] as const),
                ...Object.values(await db.redis.hgetall(k.shared('seen:poll:resolving'))).map(
                  (raw) => ['resolved', raw] as const,
                ),
              ].map(([kind, raw]) => ({
                kind,
                ...(JSON.parse(raw.slice(raw.indexOf('\n') + 1)) as { key: string; claim?: number }),
              }));
              const unsettled = (x: { kind: string; id: string }): boolean =>
                claims.some(
                  (c) =>
                    c.key === x.id &&
                    c.claim !== undefined &&
                    h.tokens.has(c.claim) &&
                    (c.kind === x.kind || (x.kind === 'raised' && 'unsettledRaise' in c)),
                );
              for (const lostMsg of sent.filter((x) => x.by === h && unsettled(x))) sent.splice(sent.indexOf(lostMsg), 1);
              await db.redis.del(h.coordinator.keys.instrument(INSTRUMENT).lease);
              await db.redis.zrem(h.coordinator.keys.replicas, h.coordinator.replica);
              await db.redis.hdel(h.coordinator.keys.holding, h.coordinator.replica);
              await db.redis.zrem(h.coordinator.keys.instrument(INSTRUMENT).watchers, h.coordinator.replica);
              nodes.push(start());
            }
          }
          // quiet end: rounds and two polls of whoever holds, three times (a handover may happen in the first)
          // a killed replica's command already on its way may have taken the lease after the kill: it expires
          const lease = nodes[0].coordinator.keys.instrument(INSTRUMENT).lease;
          const value = await db.redis.get(lease);
          if (value && !nodes.some((n) => value.endsWith(`:${n.coordinator.replica}`))) await db.redis.del(lease);
          for (let quiet = 0; quiet < 3; quiet++) {
            for (const n of nodes) await n.coordinator.round();
            // a handover takes the taker's next round
            for (let i = 0; i < 4 && !holder(); i++) for (const n of nodes) await n.coordinator.round();
            const h = holder();
            assert.ok(
              h,
              `someone holds the instrument: ${JSON.stringify(nodes.map((n) => [n.coordinator.replica, n.coordinator.live, (n.gate as unknown as { coordination: { state: unknown } }).coordination.state]))} ${String(await db.redis.get(lease))} ${JSON.stringify(await db.redis.hgetall(nodes[0].coordinator.keys.holding))} ${String(await db.redis.zcard(nodes[0].coordinator.keys.instruments))}`,
            );
            trace.push(`end: ${h.coordinator.replica} holds`);
            await poll(h);
            await poll(h);
          }
          for (const id of listed.keys()) seenListed.add(id);

          const show = (): string =>
            JSON.stringify(sent.map((x) => [x.kind, x.id, x.by.coordinator.replica, x.redelivered])) + '\n' + trace.join('\n');
          const count = (kind: string, id: string, marked?: boolean): number =>
            sent.filter((s) => s.kind === kind && s.id === id && (marked === undefined || !!s.redelivered === marked)).length;
          for (const id of seenListed) {
            assert.ok(count('raised', id) >= 1, `${id} raised: ${show()}`);
            assert.ok(count('raised', id, false) <= 1, `${id} raised at most once unmarked: ${show()}`);
          }
          for (const id of resolvedAfterSeen) {
            assert.ok(count('resolved', id) >= 1, `${id} resolved: ${show()}`);
            assert.ok(count('resolved', id, false) <= 1, `${id} resolved at most once unmarked: ${show()}`);
          }
          for (const s of sent) if (s.redelivered) assert.equal(s.redelivered, 'holder-stopped');
        } finally {
          for (const c of all) await c.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});
