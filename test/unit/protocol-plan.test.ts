/**
 * The planner of lh-protocol (plan-make.ts) against the model of what its changes do (plan-replay.ts): over
 * generated protocols (every step type; steps kept, deleted, renamed in chains and cycles, changed, toggled,
 * created, reordered) the changes lead exactly to the desired protocol, a second plan is empty, the moves are the
 * fewest (kept steps − their longest run already in order, by an independent count), and the writes never exceed
 * the bound. The seed is printed; LH_SEED=<n> replays one.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { exportText, type ProtocolExport, readDesired } from '../../src/nodes/lh-protocol/export-format';
import {
  type Change,
  describeChange,
  longestIncreasingRun,
  planChanges,
  writeCount,
} from '../../src/nodes/lh-protocol/plan-make';
import { replayChanges } from '../../src/nodes/lh-protocol/plan-replay';
import { currentAndDesired, keptInCurrentOrder, lisLength, stepOf } from './protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

function count(changes: Change[], ...actions: Change['action'][]): number {
  return changes.filter((c) => actions.includes(c.action)).length;
}

describe('lh-protocol planner (plan-make)', () => {
  before(() => console.log(`      protocol-plan seed: ${SEED} (LH_SEED=${SEED} replays it)`));

  it('reaches the desired protocol exactly, a second plan is empty, moves are the fewest, writes within the bound', () => {
    fc.assert(
      fc.property(currentAndDesired(0, 14), ({ current, desired: given }) => {
        const protocol: ProtocolExport = { name: 'P', steps: current.map(stepOf) };
        const desired = readDesired({ steps: given }, 'test');
        const { changes, target, match } = planChanges(protocol, desired);
        const after = replayChanges(protocol, changes);
        assert.equal(exportText(after), exportText(target));
        assert.deepEqual(
          after.steps.map((s) => s.name),
          given.map((d) => d.name),
        );
        assert.deepEqual(planChanges(after, desired).changes, []);

        // kept steps: current steps that a desired step keeps (by renamedFrom or name), by their desired places
        const keptPlaces = keptInCurrentOrder(match);
        const minimalMoves = keptPlaces.length - lisLength(keptPlaces);
        assert.equal(count(changes, 'move'), minimalMoves, 'moves: kept steps outside the longest run in order');
        const bound =
          count(changes, 'create', 'delete', 'rename', 'update', 'enable', 'disable') + minimalMoves + (minimalMoves > 0 ? 1 : 0);
        assert.ok(writeCount(changes) <= bound, `${writeCount(changes)} writes > bound ${bound}`);
        assert.equal(count(changes, 'create') + keptPlaces.length, given.length);
        assert.equal(count(changes, 'delete') + keptPlaces.length, current.length);
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('touches nothing when the desired protocol is the current one, whatever its order of keys', () => {
    fc.assert(
      fc.property(currentAndDesired(0, 12), ({ current }) => {
        const protocol: ProtocolExport = { name: 'P', steps: current.map(stepOf) };
        const reversed = protocol.steps.map((s) => Object.fromEntries(Object.entries(s).reverse()));
        assert.deepEqual(planChanges(protocol, readDesired({ steps: reversed }, 'test')).changes, []);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('longestIncreasingRun returns an increasing run of the longest length', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 40 }), (values) => {
        const run = longestIncreasingRun(values);
        assert.equal(run.length, lisLength(values));
        for (let i = 1; i < run.length; i++) {
          assert.ok(run[i] > run[i - 1] && values[run[i]] > values[run[i - 1]]);
        }
      }),
      { seed: SEED },
    );
  });

  it('swaps two names with two renames (no temporary name) and orders a chain so no rename takes a held name', () => {
    const a = stepOf({ name: 'A', stepType: 'PauseStep', disabled: false, k: 0 });
    const b = stepOf({ name: 'B', stepType: 'PauseStep', disabled: false, k: 1 });
    const c = stepOf({ name: 'C', stepType: 'PauseStep', disabled: false, k: 2 });
    const swap = planChanges(
      { name: 'P', steps: [a, b] },
      readDesired(
        {
          steps: [
            { ...a, name: 'B', renamedFrom: 'A' },
            { ...b, name: 'A', renamedFrom: 'B' },
          ],
        },
        't',
      ),
    );
    assert.deepEqual(
      swap.changes.map((x) => x.action),
      ['rename', 'rename'],
    );
    // chain: B → C must wait until C → D is done
    const chain = planChanges(
      { name: 'P', steps: [a, b, c] },
      readDesired(
        {
          steps: [
            { ...a, name: 'B', renamedFrom: 'A' },
            { ...b, name: 'C', renamedFrom: 'B' },
            { ...c, name: 'D', renamedFrom: 'C' },
          ],
        },
        't',
      ),
    );
    assert.deepEqual(
      chain.changes.map((x) => (x.action === 'rename' ? `${x.from}>${x.name}` : x.action)),
      ['C>D', 'B>C', 'A>B'],
    );
  });

  it('lists the changes in the safe order: deletes, renames, updates, enable/disable, creates, moves', () => {
    const rank: Record<Change['action'], number> = { delete: 0, rename: 1, update: 2, enable: 3, disable: 3, create: 4, move: 5 };
    fc.assert(
      fc.property(currentAndDesired(0, 12), ({ current, desired }) => {
        const { changes } = planChanges({ name: 'P', steps: current.map(stepOf) }, readDesired({ steps: desired }, 't'));
        for (let i = 1; i < changes.length; i++) assert.ok(rank[changes[i - 1].action] <= rank[changes[i].action]);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('finds a step already renamed under its new name, so a plan after an interrupted apply completes it', () => {
    const a = stepOf({ name: 'New name', stepType: 'PauseStep', disabled: false, k: 0 });
    const { changes } = planChanges({ name: 'P', steps: [a] }, readDesired({ steps: [{ ...a, renamedFrom: 'Old name' }] }, 't'));
    assert.deepEqual(changes, []);
  });
});

describe('lh-protocol: an update as msg.applied and a stop message describe it (describeChange)', () => {
  const step = stepOf({ name: 'Pause', stepType: 'PauseStep', disabled: false, k: 0 });
  const update = (fields: string[]): Change => ({ action: 'update', name: 'Pause', fields, step });

  it('names ordinary fields as they are', () => {
    assert.equal(describeChange(update(['duration', 'message'])), 'update "Pause": duration, message');
  });

  it('never shows a line break, an escape or a bidi override of a key, nor more than 20 keys of 60 characters', () => {
    // a step's own keys are any text (a desired document from elsewhere, the instrument's own): a key with a line
    // break would start a forged line in the log, one of 200,000 characters a message of that size
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { minLength: 1, maxLength: 40 }), (fields) => {
        const text = describeChange(update(fields));
        assert.doesNotMatch(text, /[\p{Cc}\p{Cf}\u2028\u2029]/u);
        assert.ok(text.length <= 'update "Pause": '.length + 20 * (61 + 2) + 3, `bounded: ${text.length}`);
      }),
      { numRuns: 200 },
    );
    assert.equal(describeChange(update([`k\n[error] forged ${'y'.repeat(100)}`])).includes('\n'), false);
  });
});
