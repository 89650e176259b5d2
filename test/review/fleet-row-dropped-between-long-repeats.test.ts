/**
 * Review finding (the fleet tab, example 07): "prune" dropped every row not heard of for 5 minutes, on the promise that
 * lh-state sends its document again every 60 s. *Again every* is any number of seconds up to a day: with 600 (a lab
 * that keeps its broker quiet) an instrument left the fleet tab 5 minutes after each document and came back at the
 * next, an error pending on it missing from the wall screen for half of every 10 minutes. A row now stays as long as
 * its document's MQTT 5 expiry says (three repeats, which lh-state puts on every document), at least 5 minutes; a
 * removed instrument still leaves (after three of its repeats).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';

import { FleetRow, foldFleet, STALE_MS } from '../../src/observe/fleet-view';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
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

describe('review: a fleet row between two documents of a state node that repeats rarely', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('Again every 600 s: the row stays between repeats, and leaves three repeats after the last (module and example 07)', async function () {
    const server = serverFlow(sim, { withB: false });
    await helper.load(
      [...packageNodes(), tlsConfigNode],
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', repeat: '600', machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      server.credentials,
    );
    const docs: Msg[] = [];
    helper.getNode('doc').on('input', (msg: Msg) => docs.push(msg));
    sim.injectPendingError({ severity: 'Error', title: 'Clot' });
    await until(
      () => docs.some((d) => (d.payload as { errors: { pending: number } }).errors.pending === 1),
      'a document',
      10_000,
    );
    const msg = docs[docs.length - 1]; // the state node's own msg, as it reaches the fleet node
    for (const fold of [foldFleet, exampleFold()]) {
      let rows = fold([], msg, 0);
      const rowAt = (at: number): string[] => fold(rows, { topic: 'prune' }, at).map((r) => r.instrument);
      assert.deepEqual(rowAt(6 * 60_000), ['sim'], 'still there 6 minutes on: its next document is due at 10');
      assert.deepEqual(rowAt(30 * 60_000), ['sim'], 'three repeats');
      rows = fold(rows, { topic: 'prune' }, 30 * 60_000 + 1);
      assert.deepEqual(rows, [], 'gone three repeats after its last document');
    }
  });

  it('property: a row is kept until three repeats (at least 5 minutes) after its last document, module and example alike', function () {
    console.log(`      seed ${seed} (LH_SEED to replay)`);
    const run = exampleFold();
    const doc = (instrument: string): Msg => ({
      instrument,
      connection: { state: 'online', reason: null },
      run: { state: null },
      errors: { pending: 1, list: [] },
      updatedAt: 'x',
    });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.constantFrom('a', 'b', 'c'),
            expiry: fc.oneof(fc.integer({ min: 3, max: 3 * 86_400 }), fc.constant(undefined), fc.constantFrom(NaN, -5, '900')),
            wait: fc.nat(4 * 3_600_000),
            prune: fc.boolean(),
          }),
          { maxLength: 30 },
        ),
        (steps) => {
          let ours: readonly FleetRow[] = [];
          let theirs: readonly FleetRow[] = [];
          const last = new Map<string, { at: number; keep: number }>();
          let now = 0;
          for (const s of steps) {
            now += s.wait;
            const m = s.prune
              ? { topic: 'prune' }
              : { topic: `lab/${s.name}/state`, payload: doc(s.name), retain: true, messageExpiryInterval: s.expiry };
            ours = foldFleet(ours, m, now);
            theirs = run(theirs, m, now);
            assert.deepEqual(theirs, ours, 'example 07 folds as the module does');
            if (!s.prune) {
              const e = typeof s.expiry === 'number' && Number.isFinite(s.expiry) ? s.expiry * 1000 : 0;
              last.set(s.name, { at: now, keep: Math.max(STALE_MS, e) });
            } else for (const [k, v] of [...last]) if (now - v.at > v.keep) last.delete(k);
            assert.deepEqual(
              ours.map((r) => r.instrument),
              [...last.keys()].sort(),
            );
          }
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});
