/**
 * ErrorGate's held claims (review39): a claim whose msg the node has not sent yet (it waits for its deck photo, or for
 * the node's next instance) is held. Neither a round's settle nor a leave's (`all`) takes it, also when a Redis failure
 * stops a settle half-way (the rest kept, in order); released (the msg sent), it settles a round later, as one sent at
 * once. A held claim left unsettled is what lets the next holder send the msg again, marked, after a stop: before,
 * every claim was settled a round after it passed, sent or not. The gate on fakes: its coordination and its shared
 * memory, which records each settle and fails one on demand.
 */
import assert from 'node:assert/strict';

import type { InstrumentCoordination } from '../../src/coordination/coordinator';
import { ErrorGate, type HoldClaim } from '../../src/coordination/error-gate';
import type { SeenEntry, SharedSeen } from '../../src/coordination/stores';
import { Rng } from '../support/prng';

interface Rec {
  id: string;
  title: string;
}

const TOKEN = 5;

/**
 * A holder's gate; `settled` lists the ids settled, in order; `fail.after = n`: n more settles succeed, the next throws
 * (Redis gone).
 */
function holderGate(): { gate: ErrorGate<Rec>; settled: string[]; fail: { after?: number } } {
  const coordination = {
    isHolder: true,
    state: { role: 'holder', token: TOKEN },
    dataLost: undefined,
    addSettler: () => undefined,
    untoldLoss: () => Promise.resolve(false),
    lapsed: () => false,
    leaseValue: () => 'lease',
  } as unknown as InstrumentCoordination;
  const settled: string[] = [];
  const fail: { after?: number } = {};
  const settle = (entry: SeenEntry, claim: number): Promise<boolean> => {
    assert.equal(claim, TOKEN);
    if (fail.after === 0) {
      fail.after = undefined;
      return Promise.reject(new Error('Connection is closed.'));
    }
    if (fail.after !== undefined) fail.after--;
    settled.push(entry.key);
    return Promise.resolve(true);
  };
  const seen = {
    raise: () => Promise.resolve(true),
    resolve: () => Promise.resolve(true),
    settleRaise: settle,
    settleResolve: settle,
  } as unknown as SharedSeen;
  return { gate: new ErrorGate<Rec>(coordination, seen, { keyOf: (_s, r) => r.id }), settled, fail };
}

/** Passes `ids` (raised) through the gate; those in `held` are held by the node: their release functions. */
async function pass(gate: ErrorGate<Rec>, ids: string[], held: string[] = []): Promise<Map<string, () => void>> {
  const releases = new Map<string, () => void>();
  const items = ids.map((id) => ({ source: 'A', record: { id, title: id } }));
  await gate.filter(items, [], undefined, (_list, item, hold: HoldClaim) => {
    if (held.includes(item.record.id)) releases.set(item.record.id, hold());
  });
  return releases;
}

describe('error gate: a claim is settled only once its msg went out (held claims)', function () {
  it('a held claim survives the rounds and a leave; released, it settles the round after', async function () {
    const { gate, settled } = holderGate();
    const releases = await pass(gate, ['a', 'b', 'c'], ['b']);
    await gate.settle(false);
    assert.deepEqual(settled, [], 'a round later, not at the first round');
    await gate.settle(false);
    assert.deepEqual(settled, ['a', 'c'], 'sent ones settled, the held one kept');
    await gate.settle(true);
    assert.deepEqual(settled, ['a', 'c'], 'a leave (all) leaves the held claim unsettled: the next holder sends it');
    assert.equal(gate.unsettled, 1);
    releases.get('b')?.();
    await gate.settle(false);
    assert.deepEqual(settled, ['a', 'c'], 'released: it has the round to leave through the flow');
    await gate.settle(false);
    assert.deepEqual(settled, ['a', 'c', 'b']);
    assert.equal(gate.unsettled, 0);
  });

  it('released and then a leave: settled by it (the msg went out)', async function () {
    const { gate, settled } = holderGate();
    const releases = await pass(gate, ['a'], ['a']);
    releases.get('a')?.();
    releases.get('a')?.(); // twice: nothing more
    await gate.settle(true);
    assert.deepEqual(settled, ['a']);
  });

  it('a Redis failure in the middle of a settle keeps the rest, in order, and the held ones', async function () {
    const { gate, settled, fail } = holderGate();
    const releases = await pass(gate, ['a', 'b', 'c', 'd'], ['b']);
    await gate.settle(false);
    fail.after = 1; // a settles, c fails
    await assert.rejects(gate.settle(false));
    assert.deepEqual(settled, ['a']);
    assert.equal(gate.unsettled, 3, 'b (held), c and d kept');
    await gate.settle(true);
    assert.deepEqual(settled, ['a', 'c', 'd'], 'in order, past the held one');
    releases.get('b')?.();
    await gate.settle(false);
    await gate.settle(false);
    assert.deepEqual(settled, ['a', 'c', 'd', 'b']);
  });

  it('300 seeds of passes, holds, releases, rounds, leaves and failures: never a held claim settled, none lost', async function () {
    for (let seed = 1; seed <= 300; seed++) {
      const rng = new Rng(seed);
      const { gate, settled, fail } = holderGate();
      const releases = new Map<string, () => void>();
      /** per id: held now; the settle calls (round or leave) that completed since it was passed or released */
      const state = new Map<string, { held: boolean; rounds: number; order: number }>();
      let next = 0;
      const trace: string[] = [];
      for (let step = 0; step < 40; step++) {
        const op = rng.weighted({ pass: 4, release: 3, round: 4, leave: 1, fail: 1 });
        trace.push(op);
        if (op === 'pass') {
          const ids = Array.from({ length: rng.int(1, 3) }, () => `e${next++}`);
          const held = ids.filter(() => rng.chance(0.5));
          for (const [id, release] of await pass(gate, ids, held)) releases.set(id, release);
          for (const id of ids) state.set(id, { held: held.includes(id), rounds: 0, order: state.size });
        } else if (op === 'release') {
          const waiting = [...releases.keys()];
          if (waiting.length === 0) continue;
          const id = rng.pick(waiting);
          releases.get(id)?.();
          releases.delete(id);
          const s = state.get(id);
          if (s) Object.assign(s, { held: false, rounds: 0 });
        } else {
          if (op === 'fail') fail.after = rng.int(0, 3);
          const all = op === 'leave' || (op === 'fail' && rng.chance(0.5));
          const before = settled.length;
          const heldNow = [...state].filter(([, s]) => s.held).map(([id]) => id);
          const failed = await gate.settle(all).then(
            () => false,
            () => true,
          );
          const now = settled.slice(before);
          const why = `seed ${seed}: ${trace.join(' ')}`;
          for (const id of now) {
            assert.ok(!heldNow.includes(id), `${why}: held ${id} settled`);
            assert.ok(all || (state.get(id)?.rounds ?? 0) >= 1, `${why}: ${id} settled without a round`);
          }
          // in the order they were passed (a released claim keeps its place)
          const order = now.map((id) => Number(id.slice(1)));
          assert.deepEqual(
            order,
            [...order].sort((x, y) => x - y),
            `${why}: settled out of order`,
          );
          for (const id of now) state.delete(id);
          if (!failed) {
            for (const [id, s] of state) {
              if (s.held) continue;
              assert.ok(!all && s.rounds === 0, `${why}: ${id} not settled (a round after, or a leave)`);
            }
          }
          for (const s of state.values()) if (!s.held) s.rounds++;
        }
      }
      // the end: every msg sent, a leave settles everything
      fail.after = undefined;
      for (const release of releases.values()) release();
      await gate.settle(true);
      assert.equal(gate.unsettled, 0, `seed ${seed}`);
      assert.deepEqual([...settled].sort(), Array.from({ length: next }, (_, i) => `e${i}`).sort(), `seed ${seed}: each once`);
      assert.equal(new Set(settled).size, settled.length, `seed ${seed}: none twice`);
    }
  });
});
