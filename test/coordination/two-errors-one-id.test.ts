/**
 * Two errors under one id with coordination (issue 29, finding 5): an instrument that lists two records with one id
 * and different titles in one answer. One Node-RED raises each once while it is listed and resolves each once when it
 * leaves (README "Several errors under one id"); several Node-REDs through Redis must do the same, whichever replica
 * holds the instrument and however often it changes hands. Real Redis, real coordinators and gates; each replica's
 * own memory is the poll node's (SeenErrors), as in lh-error-poll.
 */
import assert from 'assert';

import fc from 'fast-check';

import { fingerprint, identityOf } from '../../src/client/error-identity';
import { Coordinator } from '../../src/coordination/coordinator';
import { ErrorGate, GateItem } from '../../src/coordination/error-gate';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { SeenErrors } from '../../src/nodes/lh-error-poll/seen-errors';
import { reachable } from '../support/redis-link';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Rec {
  id: string;
  title: string;
}

const INSTRUMENT = 'http://127.0.0.1:9|';
const rules = { keyOf: (_source: string, r: Rec): string => r.id };
const idOf = (r: Rec): string => r.id;
const all = (): boolean => true;

interface Replica {
  coordinator: Coordinator;
  /** its Redis link: a killed replica's never reaches Redis again */
  link: { down: boolean };
  gate: ErrorGate<Rec>;
  memory: SeenErrors;
}

interface Sent {
  kind: 'raised' | 'resolved';
  error: string;
  redelivered?: string;
  lost?: boolean;
}

const name = (r: Rec): string => `${r.id}/${r.title}`;

describeWithRedis('coordination: two errors under one id (issue 29.5)', function () {
  this.timeout(180000);
  const db = useRedis();
  let run = 0;
  let last = '';

  function harness(): {
    start(): Replica;
    poll(r: Replica, listed: Rec[], sent: Sent[]): Promise<void>;
    holder(replicas: Replica[]): Promise<Replica>;
    kill(r: Replica): Promise<void>;
    closeAll(): Promise<void>;
  } {
    const prefix = `lh-two-${process.pid}-${++run}`;
    last = prefix;
    const coordinators: Coordinator[] = [];
    let serial = 0;
    return {
      start(): Replica {
        const link = reachable(db.redis as unknown as StoreRedis);
        const coordinator = new Coordinator({
          redis: link.redis,
          prefix,
          leaseMs: 60000,
          replica: `r${serial++}`,
        });
        coordinators.push(coordinator);
        coordinator.join(INSTRUMENT);
        return {
          coordinator,
          link,
          gate: coordinator.errorGate<Rec>(INSTRUMENT, 'poll', rules),
          memory: new SeenErrors(),
        };
      },
      async poll(r: Replica, listed: Rec[], sent: Sent[]): Promise<void> {
        const diff = r.memory.update(listed, idOf, all);
        const item = (record: Rec): GateItem<Rec> => ({ source: 'A', record });
        const byKey = new Map<string, Rec[]>();
        for (const rec of listed) byKey.set(rec.id, [...(byKey.get(rec.id) ?? []), rec]);
        await r.gate.filter(diff.raised.map(item), diff.resolved.map(item), new Map([['A', byKey]]), (kind, it) =>
          sent.push({
            kind,
            error: name(it.record),
            ...(it.redelivered ? { redelivered: it.redelivered } : {}),
            ...(it.lost ? { lost: true } : {}),
          }),
        );
      },
      async holder(replicas: Replica[]): Promise<Replica> {
        for (let i = 0; i < 6; i++) {
          for (const r of replicas) await r.coordinator.round();
          const h = replicas.find((r) => r.coordinator.held().length > 0);
          if (h) return h;
        }
        throw new Error('nobody holds the instrument');
      },
      /** Killed: nothing settled or released; its lease and heartbeat expire (deleted here, as Redis would). */
      async kill(r: Replica): Promise<void> {
        r.link.down = true;
        const keys = r.coordinator.keys;
        await db.redis.del(keys.instrument(INSTRUMENT).lease);
        await db.redis.zrem(keys.replicas, r.coordinator.replica);
        await db.redis.hdel(keys.holding, r.coordinator.replica);
        await db.redis.zrem(keys.instrument(INSTRUMENT).watchers, r.coordinator.replica);
      },
      async closeAll(): Promise<void> {
        for (const c of coordinators) await c.close().catch(() => undefined);
      },
    };
  }

  it('each raised once while listed and resolved once when it leaves, across handovers', async function () {
    const h = harness();
    try {
      const x = { id: '7', title: 'Clot detected' };
      const y = { id: '7', title: 'Door open' };
      const sent: Sent[] = [];
      let replicas = [h.start(), h.start()];
      let holder = await h.holder(replicas);
      await h.poll(holder, [x, y], sent);
      await h.poll(holder, [x, y], sent);
      for (const r of replicas) await r.coordinator.round();
      await h.poll(holder, [x, y], sent);
      // the holder hands over (a redeploy): the other one watches on
      await holder.coordinator.close();
      replicas = [...replicas.filter((r) => r !== holder), h.start()];
      holder = await h.holder(replicas);
      await h.poll(holder, [x, y], sent);
      await h.poll(holder, [x, y], sent);
      await h.poll(holder, [x], sent); // the door is closed
      await h.poll(holder, [x], sent);
      await holder.coordinator.close();
      replicas = replicas.filter((r) => r !== holder);
      holder = await h.holder(replicas);
      await h.poll(holder, [x], sent);
      await h.poll(holder, [], sent); // the clot is handled
      await h.poll(holder, [], sent);
      assert.deepEqual(sent, [
        { kind: 'raised', error: '7/Clot detected' },
        { kind: 'raised', error: '7/Door open' },
        { kind: 'resolved', error: '7/Door open' },
        { kind: 'resolved', error: '7/Clot detected' },
      ]);
    } finally {
      await h.closeAll();
    }
  });

  it('seeded random lists with shared ids, polls, rounds and handovers: the same msgs as one Node-RED', async function () {
    type Op =
      | { kind: 'appear'; id: number }
      | { kind: 'leave'; pick: number }
      | { kind: 'poll' }
      | { kind: 'round' }
      | { kind: 'handover' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.nat(2).map((id) => ({ kind: 'appear' as const, id })) },
      { weight: 2, arbitrary: fc.nat(20).map((pick) => ({ kind: 'leave' as const, pick })) },
      { weight: 4, arbitrary: fc.constant({ kind: 'poll' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'round' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'handover' as const }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 50 }), async (ops) => {
        const h = harness();
        try {
          let replicas = [h.start(), h.start()];
          // the reference: one Node-RED polling the same lists
          const single = new SeenErrors();
          const expected: Sent[] = [];
          const sent: Sent[] = [];
          let listed: Rec[] = [];
          let serial = 0;
          const trace: string[] = [];
          for (const o of ops) {
            if (o.kind === 'appear') {
              // a new error, under one of three ids: often under an id that lists another error already
              listed = [...listed, { id: String(o.id), title: `error ${serial++}` }];
            } else if (o.kind === 'leave') {
              if (listed.length > 0) listed = listed.filter((_, i) => i !== o.pick % listed.length);
            } else if (o.kind === 'poll') {
              const holder = await h.holder(replicas);
              trace.push(`poll by ${holder.coordinator.replica}: ${listed.map(name).join(', ')}`);
              await h.poll(holder, listed, sent);
              const diff = single.update(listed, idOf, all);
              for (const r of diff.resolved) expected.push({ kind: 'resolved', error: name(r) });
              for (const r of diff.raised) expected.push({ kind: 'raised', error: name(r) });
            } else if (o.kind === 'round') {
              for (const r of replicas) await r.coordinator.round();
            } else {
              const holder = await h.holder(replicas);
              trace.push(`handover from ${holder.coordinator.replica}`);
              await holder.coordinator.close();
              replicas = [...replicas.filter((r) => r !== holder), h.start()];
            }
          }
          const sorted = (list: Sent[]): string[] => list.map((s) => JSON.stringify(s)).sort();
          assert.deepEqual(sorted(sent), sorted(expected), trace.join('\n'));
        } finally {
          await h.closeAll();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('errors recorded by 0.4.0 (one field per id) are not raised again after an upgrade, and still resolve once', async function () {
    const h = harness();
    try {
      const x = { id: '7', title: 'Clot detected' };
      const y = { id: '8', title: 'Door open' };
      const hash = new CoordinationKeys(last).instrument(INSTRUMENT).shared('seen:poll');
      const old = (r: Rec, claim?: number): string => {
        const identity = fingerprint(identityOf(r) ?? { id: r.id, fields: {} });
        const body = { source: 'A', key: r.id, identity, record: r, ...(claim === undefined ? {} : { claim }) };
        return `${identity}\n${JSON.stringify(body)}`;
      };
      // x raised and settled by 0.4.0; y claimed by a 0.4.0 holder that stopped before it settled it
      await db.redis.hset(hash, 'A:7', old(x), 'A:8', old(y, 1));
      const sent: Sent[] = [];
      let replicas = [h.start()];
      let holder = await h.holder(replicas);
      await h.poll(holder, [x, y], sent);
      await h.poll(holder, [x, y], sent);
      for (const r of replicas) await r.coordinator.round(); // settled
      await holder.coordinator.close();
      replicas = [h.start()];
      holder = await h.holder(replicas);
      await h.poll(holder, [x, y], sent);
      await h.poll(holder, [], sent);
      assert.deepEqual(sent, [
        { kind: 'raised', error: '8/Door open', redelivered: 'holder-stopped' },
        { kind: 'resolved', error: '7/Clot detected' },
        { kind: 'resolved', error: '8/Door open' },
      ]);
      assert.deepEqual(await db.redis.hgetall(hash), {}, 'nothing left open');
    } finally {
      await h.closeAll();
    }
  });

  it('seeded random lists with shared ids and holders killed: each error raised and resolved, a second time only marked', async function () {
    type Op =
      { kind: 'appear'; id: number } | { kind: 'leave'; pick: number } | { kind: 'poll' } | { kind: 'round' } | { kind: 'kill' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.nat(2).map((id) => ({ kind: 'appear' as const, id })) },
      { weight: 2, arbitrary: fc.nat(20).map((pick) => ({ kind: 'leave' as const, pick })) },
      { weight: 4, arbitrary: fc.constant({ kind: 'poll' as const }) },
      { weight: 2, arbitrary: fc.constant({ kind: 'round' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'kill' as const }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 50 }), async (ops) => {
        const h = harness();
        try {
          let replicas = [h.start(), h.start()];
          const sent: Sent[] = [];
          let listed: Rec[] = [];
          let serial = 0;
          const seenListed = new Set<string>();
          const leftAfterSeen = new Set<string>();
          const trace: string[] = [];
          const poll = async (): Promise<void> => {
            const holder = await h.holder(replicas);
            trace.push(`poll by ${holder.coordinator.replica}: ${listed.map(name).join(', ')}`);
            await h.poll(holder, listed, sent);
            if (holder.coordinator.held().length > 0) for (const r of listed) seenListed.add(name(r));
          };
          for (const o of ops) {
            if (o.kind === 'appear') {
              listed = [...listed, { id: String(o.id), title: `error ${serial++}` }];
            } else if (o.kind === 'leave') {
              if (listed.length === 0) continue;
              const gone = listed[o.pick % listed.length];
              listed = listed.filter((r) => r !== gone);
              if (seenListed.has(name(gone))) leftAfterSeen.add(name(gone));
            } else if (o.kind === 'poll') {
              await poll();
            } else if (o.kind === 'round') {
              for (const r of replicas) await r.coordinator.round();
            } else {
              const holder = await h.holder(replicas);
              trace.push(`kill ${holder.coordinator.replica}`);
              await h.kill(holder);
              replicas = [...replicas.filter((r) => r !== holder), h.start()];
            }
          }
          // quiet end: whoever holds polls twice
          await poll();
          await poll();
          for (const r of listed) seenListed.add(name(r));
          const show = `${JSON.stringify(sent)}\n${trace.join('\n')}`;
          const count = (kind: string, error: string, marked?: boolean): number =>
            sent.filter((s) => s.kind === kind && s.error === error && (marked === undefined || !!s.redelivered === marked))
              .length;
          for (const e of seenListed) {
            assert.ok(count('raised', e) >= 1, `${e} raised: ${show}`);
            assert.ok(count('raised', e, false) <= 1, `${e} raised at most once unmarked: ${show}`);
          }
          for (const e of leftAfterSeen) {
            assert.ok(count('resolved', e) >= 1, `${e} resolved: ${show}`);
            assert.ok(count('resolved', e, false) <= 1, `${e} resolved at most once unmarked: ${show}`);
          }
        } finally {
          await h.closeAll();
        }
      }),
      { numRuns: 60 },
    );
  });
});
