/**
 * Property (fast-check, real Redis, in-process Coordinators on a model clock): whatever the replicas' roles do (rounds,
 * a lease that expires, a replica cut from Redis past its lease and back, Redis blips), and whichever replicas'
 * policies learn an error (as the holder, or marked lost), every default whose error was not resolved is sent exactly
 * once across the replicas once one replica holds the instrument and rounds run; none is sent after its error was
 * resolved, none before its deadline. Each replica's policy node is modelled by what lh-error-policy does with
 * CoordinatedDefaults (fire, the holder's sweep, waiting, giving back); the shared answer ledger by its claim (the
 * first wins, an automatic claim needs the lease).
 */
import assert from 'assert';

import fc from 'fast-check';

import { Coordinator, InstrumentCoordination } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { CoordinatedDefaults } from '../../src/coordination/policy-defaults';
import { StoreRedis } from '../../src/coordination/stores';
import { reachable } from '../support/redis-link';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface P {
  key: string;
  deadline: number;
  answer: string;
}

const LEASE_MS = 60_000;
const RECHECK_MS = 1000;
const REPLICAS = 3;

type Op =
  | { kind: 'round'; r: number }
  | { kind: 'cut'; r: number } // cut from Redis (a partition of that replica, or Redis down for it)
  | { kind: 'heal'; r: number }
  | { kind: 'crash'; r: number } // cut, and its heartbeat and lease gone as their expiry would: another takes over
  | { kind: 'expire' } // the lease expires (deleted, as the expiry would)
  | { kind: 'tick'; ms: number }
  | { kind: 'redeploy'; r: number } // its policy node redeployed: a new instance, its book and mine() kept
  | { kind: 'forget'; r: number } // its poll no longer lists answered errors (the answer ledger forgets them), and its
  // node's memory of finished defaults is gone (a restart of the node's memory; its book and CoordinatedDefaults stay)
  | { kind: 'raise'; e: number; who: number; lost: number; delay: number }
  | { kind: 'resolve'; e: number; who: number }
  | { kind: 'timers'; r: number }
  | { kind: 'sweep'; r: number };

const replicaArb = fc.integer({ min: 0, max: REPLICAS - 1 });
const mask = fc.integer({ min: 1, max: 2 ** REPLICAS - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('round' as const), r: replicaArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), r: replicaArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heal' as const), r: replicaArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), r: replicaArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), r: replicaArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('redeploy' as const), r: replicaArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 90_000 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('raise' as const),
      e: fc.integer({ min: 0, max: 3 }),
      who: mask,
      lost: fc.integer({ min: 0, max: 2 ** REPLICAS - 1 }),
      delay: fc.integer({ min: 0, max: 60_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resolve' as const), e: fc.integer({ min: 0, max: 3 }), who: mask }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('timers' as const), r: replicaArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('sweep' as const), r: replicaArb }) },
);

/** One replica: its coordination and the model of its policy node (book, answer ledger, finished defaults). */
interface Replica {
  name: string;
  c: Coordinator;
  inst: InstrumentCoordination;
  d: CoordinatedDefaults<P>;
  link: { redis: StoreRedis; down: boolean };
  book: Map<string, P>;
  /** errors this replica answered (its client's answer ledger: lookupAnswer) */
  answered: Set<string>;
  /** defaults this node finished (sent, refused, cancelled) */
  finished: Set<string>;
  /** errors whose raised / resolved msg this replica's policy got */
  seen: Set<string>;
  /** resolutions this replica's policy got (and still remembers) */
  heard: Set<string>;
}

interface World {
  t: number;
  replicas: Replica[];
  keys: CoordinationKeys;
  /** the shared answer ledger: the first claim wins */
  claims: Map<string, { replica: string; at: number }>;
  /** every claim made (answers sent to the instrument), in order; `ord`: its place among sends and resolutions */
  sends: { key: string; replica: string; at: number; ord: number }[];
  /** the place of each resolution among sends and resolutions (several happen at one model time) */
  resolvedOrd: Map<string, number>;
  ord: number;
  /** the earliest deadline any replica gave the error */
  deadlines: Map<string, number>;
  /** when the error was resolved */
  resolved: Map<string, number>;
  attemptsAfterResolved: string[];
  escalated: string[];
  log: string[];
}

/** What the runs exercised (printed): copies kept by lost replicas, defaults found by sweeps, claims refused as answered. */
const seenCases = { lostCopies: 0, swept: 0, refusedAnswered: 0, handedOverAfterFinish: 0 };

describeWithRedis('coordination: policy defaults across replicas (property)', function () {
  this.timeout(240_000); // 200 seeded runs: about 10 s on a quiet machine, over 60 s at load 10
  const db = useRedis();
  let n = 0;

  async function world(): Promise<World> {
    const keys = new CoordinationKeys(`lh-defaults-prop-${process.pid}-${++n}`);
    const w: World = {
      t: 1_000_000,
      replicas: [],
      keys,
      claims: new Map(),
      sends: [],
      deadlines: new Map(),
      resolved: new Map(),
      resolvedOrd: new Map(),
      ord: 0,
      attemptsAfterResolved: [],
      escalated: [],
      log: [],
    };
    for (let i = 0; i < REPLICAS; i++) {
      const link = reachable(db.redis);
      const c = new Coordinator({ redis: link.redis, prefix: keys.prefix, leaseMs: LEASE_MS, replica: `r${i}`, now: () => w.t });
      const inst = c.join('inst');
      w.replicas.push({
        name: `r${i}`,
        c,
        inst,
        d: c.defaults<P>('inst', 'policy'),
        link,
        book: new Map(),
        answered: new Set(),
        finished: new Set(),
        seen: new Set(),
        heard: new Set(),
      });
    }
    // the rounds join() schedules run once now (the next ones are 20 s of real time away): let them finish
    await new Promise((r) => setTimeout(r, 30));
    return w;
  }

  /** lh-error-policy's cancel. */
  async function cancel(r: Replica, key: string): Promise<void> {
    await r.d.cancel(key);
    if (r.book.delete(key)) r.finished.add(key);
  }

  /** lh-error-policy's waitForOther: looked at again a second later (back in the shared schedule when taken). */
  async function later(w: World, r: Replica, p: P): Promise<void> {
    const again = { ...p, deadline: w.t + RECHECK_MS };
    r.book.set(p.key, again);
    await r.d.requeue(again);
  }

  /** lh-error-policy's fire. */
  async function fire(w: World, r: Replica, key: string): Promise<void> {
    const p = r.book.get(key);
    if (!p) return;
    if (r.answered.has(key)) return cancel(r, key); // lookupAnswer: this replica answered it
    const verdict = await r.d.take(key, p);
    if (verdict === 'later') return later(w, r, p);
    if (verdict === 'drop') {
      r.book.delete(key);
      return;
    }
    // the claim, fenced by the lease (an automatic answer)
    if (r.link.down) {
      w.escalated.push(`${key} by ${r.name}: the shared ledger unreachable`);
      return cancel(r, key);
    }
    const lease = await db.redis.get(w.keys.instrument('inst').lease);
    if (!r.inst.isHolder || lease !== r.inst.grant?.value) {
      if (!(await r.d.giveBack(p))) return later(w, r, p);
      r.book.delete(key);
      return;
    }
    if (r.heard.has(key)) w.attemptsAfterResolved.push(`${key} by ${r.name} at ${w.t}`);
    if (w.claims.has(key)) {
      seenCases.refusedAnswered++;
      return cancel(r, key); // already answered (by this same default): quiet
    }
    if (w.resolved.has(key)) return cancel(r, key); // the instrument: not pending (read before any PUT)
    w.claims.set(key, { replica: r.name, at: w.t });
    w.sends.push({ key, replica: r.name, at: w.t, ord: ++w.ord });
    r.answered.add(key);
    return cancel(r, key);
  }

  async function step(w: World, op: Op): Promise<void> {
    const r = 'r' in op ? w.replicas[op.r] : undefined;
    switch (op.kind) {
      case 'round':
        await r?.c.round();
        break;
      case 'cut':
        if (r) r.link.down = true;
        break;
      case 'heal':
        if (r) r.link.down = false;
        break;
      case 'crash':
        if (!r) break;
        r.link.down = true;
        await db.redis.zrem(w.keys.replicas, r.name);
        if ((await db.redis.get(w.keys.instrument('inst').lease)) === r.inst.grant?.value)
          await db.redis.del(w.keys.instrument('inst').lease);
        break;
      case 'expire':
        await db.redis.del(w.keys.instrument('inst').lease);
        break;
      case 'tick':
        w.t += op.ms;
        break;
      case 'redeploy': {
        if (!r) break;
        const mine = r.d.mine();
        r.d = r.c.defaults<P>('inst', 'policy');
        for (const key of mine) if (r.book.has(key)) r.d.keep(key);
        r.finished.clear();
        r.heard.clear();
        break;
      }
      case 'forget':
        r?.answered.clear();
        r?.finished.clear();
        r?.heard.clear();
        break;
      case 'raise': {
        const key = `e${op.e}`;
        if (w.resolved.has(key)) break;
        for (const [i, x] of w.replicas.entries()) {
          if (!(op.who & (1 << i)) || x.seen.has(key)) continue;
          x.seen.add(key);
          // a replica notifies as the holder, or marked lost (while it said lost, or before its catch-up)
          const lost = x.inst.state.role === 'lost' || (op.lost & (1 << i)) !== 0;
          if (!lost && !x.inst.isHolder) continue; // a standby notifies nothing
          const p: P = { key, deadline: w.t + op.delay, answer: 'Retry' };
          w.deadlines.set(key, Math.min(w.deadlines.get(key) ?? Infinity, p.deadline));
          x.book.set(key, p);
          if (lost && !x.inst.isHolder) seenCases.lostCopies++;
          await x.d.add(p, { lost });
          if (p.deadline <= w.t) await fire(w, x, key); // answer-now
        }
        break;
      }
      case 'resolve': {
        const key = `e${op.e}`;
        if (!w.deadlines.has(key) || w.resolved.has(key)) break;
        w.resolved.set(key, w.t);
        w.resolvedOrd.set(key, ++w.ord);
        for (const [i, x] of w.replicas.entries()) {
          if (!(op.who & (1 << i))) continue;
          x.seen.add(key);
          x.heard.add(key);
          if (x.book.has(key)) await cancel(x, key);
          else x.finished.add(key); // lh-error-policy remembers the resolution of an error it held no default for
        }
        break;
      }
      case 'timers':
        if (!r) break;
        for (const p of [...r.book.values()]) if (p.deadline <= w.t) await fire(w, r, p.key);
        break;
      case 'sweep':
        if (!r) break;
        for (const p of await r.d.due(w.t)) {
          seenCases.swept++;
          if (r.finished.has(p.key) && !r.book.has(p.key)) {
            seenCases.handedOverAfterFinish++;
            r.d.done(p.key); // handed over after this node finished it
            continue;
          }
          r.book.set(p.key, p);
          await fire(w, r, p.key);
        }
        break;
    }
    w.log.push(
      `${JSON.stringify(op)} t=${w.t} roles=${w.replicas.map((x) => `${x.name}:${x.inst.state.role}${x.link.down ? '(cut)' : ''}`).join(',')}` +
        ` books=${w.replicas.map((x) => [...x.book.keys()].join('+') || '-').join('|')} sent=${w.sends.map((s) => s.key).join(',')}`,
    );
  }

  /** Redis back for everyone, rounds run, time passes: every timer and sweep does its work. */
  async function settle(w: World): Promise<void> {
    for (const x of w.replicas) x.link.down = false;
    w.t += 130_000; // past every deadline
    for (let i = 0; i < 8; i++) {
      for (const x of w.replicas) await x.c.round();
      const holders = w.replicas.filter((x) => x.inst.isHolder);
      if (i >= 2) assert.equal(holders.length, 1, `one holder: ${w.replicas.map((x) => x.inst.state.role).join(',')}`);
      for (const x of w.replicas) await step(w, { kind: 'timers', r: w.replicas.indexOf(x) });
      for (const x of w.replicas) await step(w, { kind: 'sweep', r: w.replicas.indexOf(x) });
      w.t += 2 * RECHECK_MS;
    }
  }

  function check(w: World): void {
    for (const [key, deadline] of w.deadlines) {
      const sent = w.sends.filter((s) => s.key === key);
      const resolvedAt = w.resolved.get(key);
      const resolvedOrd = w.resolvedOrd.get(key);
      if (resolvedAt === undefined) assert.equal(sent.length, 1, `${key}: sent exactly once (sent ${sent.length} times)`);
      else assert.ok(sent.length <= 1, `${key}: sent at most once`);
      for (const s of sent) {
        assert.ok(s.at >= deadline, `${key}: sent at ${s.at}, before its deadline ${deadline}`);
        // after, in the order things happened (a send and the resolution may share one model time)
        if (resolvedOrd !== undefined) assert.ok(s.ord < resolvedOrd, `${key}: sent after it was resolved`);
      }
    }
    assert.deepEqual(w.attemptsAfterResolved, [], 'nothing attempted by a replica that heard the resolution');
    assert.deepEqual(w.escalated, [], 'no default escalated for want of Redis');
    for (const x of w.replicas) assert.equal(x.book.size, 0, `${x.name} keeps no default: ${[...x.book.keys()].join(',')}`);
  }

  it('every default of an unresolved error sent exactly once, never before its deadline nor after the resolution', async function () {
    const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
    const runs = process.env.LH_RUNS ? Number(process.env.LH_RUNS) : 200;
    const started = Date.now();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
          const w = await world();
          try {
            for (const op of ops) await step(w, op);
            await settle(w);
            check(w);
          } catch (err) {
            const e = err instanceof Error ? err : new Error(String(err));
            e.message = `${e.message}\n      steps:\n        ${w.log.join('\n        ')}`;
            throw e;
          } finally {
            for (const x of w.replicas) {
              x.link.down = false;
              await x.c.close();
            }
          }
        }),
        {
          numRuns: runs,
          seed,
          examples: [
            // r1 lost notifies e0 as r0 (the holder) does; r0 sends it and forgets its answer; r1, back on standby,
            // hands its copy over; r0's sweep finds it: the shared claim refuses it (answered by this default)
            [
              [
                { kind: 'round', r: 0 },
                { kind: 'round', r: 1 },
                { kind: 'round', r: 2 },
                { kind: 'cut', r: 1 },
                { kind: 'tick', ms: 70_000 },
                { kind: 'round', r: 0 },
                { kind: 'round', r: 1 },
                { kind: 'raise', e: 0, who: 3, lost: 0, delay: 1000 },
                { kind: 'tick', ms: 2000 },
                { kind: 'timers', r: 0 },
                { kind: 'forget', r: 0 },
                { kind: 'heal', r: 1 },
                { kind: 'round', r: 1 },
                { kind: 'timers', r: 1 },
                { kind: 'sweep', r: 0 },
              ],
            ],
            // the same with a failover: r0 crashes after sending, r1 takes over, r2's lost copy is handed to r1
            [
              [
                { kind: 'round', r: 0 },
                { kind: 'cut', r: 2 },
                { kind: 'tick', ms: 70_000 },
                { kind: 'round', r: 0 },
                { kind: 'round', r: 1 },
                { kind: 'round', r: 2 },
                { kind: 'raise', e: 1, who: 5, lost: 0, delay: 500 },
                { kind: 'tick', ms: 1000 },
                { kind: 'timers', r: 0 },
                { kind: 'crash', r: 0 },
                { kind: 'round', r: 1 },
                { kind: 'heal', r: 2 },
                { kind: 'round', r: 2 },
                { kind: 'timers', r: 2 },
                { kind: 'sweep', r: 1 },
              ],
            ],
          ],
        },
      );
    } catch (err) {
      console.log(`      seed ${seed} (replay: LH_SEED=${seed})`);
      throw err;
    }
    console.log(`      ${runs} runs in ${Date.now() - started} ms (seed ${seed}); cases: ${JSON.stringify(seenCases)}`);
  });
});
