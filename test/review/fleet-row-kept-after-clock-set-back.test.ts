/**
 * Review finding (the fleet tab, example 07, after a wall-clock step): "prune" kept a row while `now - seenAt` was
 * within its keep time; after the clock was set back (an NTP correction, a VM resumed) every row was heard of "in the
 * future", `now - seenAt` negative, and an instrument removed from the flows then stayed on the wall screen for as long
 * as the step plus its keep time (a day back: a day), showing its last state and errors as current. A row heard of in
 * the future is now counted from the prune that sees it. Seeded: drawn steps back and expiries (LH_SEED, LH_CASES).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';

import { FleetRow, foldFleet, STALE_MS } from '../../src/observe/fleet-view';

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples-extra', '07 Operator dashboard (needs Dashboard 2.0).json');

/** Example 07's "fleet (server side)" as a function of (rows, msg, now). */
function exampleFold(): (rows: readonly FleetRow[], msg: unknown, now: number) => readonly FleetRow[] {
  const nodes = JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as { id: string; func?: string }[];
  const func = nodes.find((n) => n.id === 'lh-ex07-fleet')?.func;
  assert.ok(func);
  const body = new Function('msg', 'flow', 'Date', func) as (msg: unknown, flow: unknown, date: unknown) => unknown;
  return (rows, msg, now) => {
    let stored: unknown = rows.length === 0 ? undefined : rows;
    const flow = { get: () => stored, set: (_k: string, v: unknown) => (stored = v) };
    body(msg, flow, { now: () => now, parse: Date.parse });
    return (stored ?? []) as readonly FleetRow[];
  };
}

const doc = {
  instrument: 'STAR 1',
  connection: { state: 'online', reason: null },
  run: { state: null, protocol: null, step: null, progress: null, eta: null },
  errors: { pending: 0, mostSevere: null, list: [] },
  updatedAt: '2027-01-15T08:00:00.000Z',
};

describe('review: a fleet row after the clock was set back', function () {
  for (const [name, fold] of [
    ['module', foldFleet],
    ['example 07', exampleFold()],
  ] as const) {
    it(`${name}: a removed instrument leaves its keep time after the step, not the step later`, function () {
      console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 7 * 86_400_000 }),
          fc.option(fc.integer({ min: 0, max: 3 * 86_400 + 1 }), { nil: undefined }),
          (stepBack, expiry) => {
            const t0 = 1_800_000_000_000;
            const msg = {
              topic: 'lab/STAR 1/state',
              payload: doc,
              ...(expiry === undefined ? {} : { messageExpiryInterval: expiry }),
            };
            let rows = fold([], msg, t0); // the last document of an instrument then removed from the flows
            const keep = Math.min(3 * 86_400_000, Math.max(STALE_MS, (expiry ?? 0) * 1000));
            const back = t0 - stepBack; // the clock set back
            rows = fold(rows, { topic: 'prune' }, back);
            assert.equal(rows.length, 1, 'kept right after the step');
            rows = fold(rows, { topic: 'prune' }, back + keep);
            assert.equal(rows.length, 1, 'kept for its keep time');
            rows = fold(rows, { topic: 'prune' }, back + keep + 60_000);
            assert.equal(rows.length, 0, `still on the screen ${keep + 60_000} ms after the step of ${stepBack} ms`);
          },
        ),
        { seed, numRuns: Number(process.env.LH_CASES ?? 50) },
      );
    });
  }

  it('a prune that changes nothing gives the same rows back', function () {
    const rows = foldFleet([], { topic: 'x', payload: doc }, 1000);
    assert.equal(foldFleet(rows, { topic: 'prune' }, 2000), rows);
  });
});
