/**
 * Review (round trip): a desired protocol whose steps carry any JSON own fields plan accepts (odd keys, Unicode,
 * nested objects and arrays, large and small numbers, null), applied to an empty protocol over real HTTP, exports as
 * the very document planned (its target), and a second plan is empty; the export planned onto another empty protocol
 * does the same. Seeded: the seed is printed, LH_SEED=<n> replays it, LH_CASES sets the number of protocols (4).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { STEP_TYPES } from '../../src/contract/instrument-contract';
import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { type DesiredStep, exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;

/** A key plan may take: a letter (not upper case) then anything, so that its spelling is the one read back. */
const key = fc
  .tuple(fc.constantFrom('a', 'z', 'x', 'é', 'ß', '_', '$', '1'), fc.string({ unit: 'binary', maxLength: 6 }))
  .map(([first, rest]) => `${first}${rest}`);
const json = fc.jsonValue({ maxDepth: 3 }).filter((value) => !JSON.stringify(value).includes('"__proto__"'));
const step = fc.record({
  name: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  stepType: fc.constantFrom(...STEP_TYPES),
  disabled: fc.boolean(),
  own: fc.dictionary(
    key.filter(
      (k) => !['name', 'steptype', 'disabled', 'renamedfrom', 'id', 'steporder', 'makenameunique'].includes(k.toLowerCase()),
    ),
    json,
    { maxKeys: 4 },
  ),
});

function accepted(steps: unknown[]): ReturnType<typeof readDesired> | undefined {
  try {
    return readDesired(JSON.parse(JSON.stringify({ steps })), 'plan');
  } catch {
    return undefined; // refused by plan (a key spelled otherwise than read back, say): not a round trip
  }
}

describe('review: lh-protocol round trip of any JSON own fields (property, real HTTP)', function () {
  this.timeout(60_000);
  const { sim, make } = useClients();

  it('applied to an empty protocol it exports as planned; a second plan is empty; the export plans onto another', async function () {
    console.log(`      protocol round-trip seed: ${SEED}, ${CASES} protocols (LH_SEED=${SEED} replays it)`);
    const client = make();
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (generated) => {
        const given = generated.map(({ own, ...s }) => ({ ...own, ...s }));
        const desired = accepted(given);
        fc.pre(desired !== undefined);
        tried++;
        let document = '';
        for (let round = 0; round < 2; round++) {
          const steps: DesiredStep[] = round === 0 ? (desired ?? []) : readDesired(JSON.parse(document), 'plan');
          const pid = sim.addProtocol(`Round trip ${round}`);
          const before = await readProtocol(client.runs, pid, 'plan');
          const { target, plan: made } = planned(before.export, steps, { protocolId: pid, instrument: client.baseUrl });
          const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply');
          await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply');
          const after = await readProtocol(client.runs, pid, 'plan');
          assert.equal(exportText(after.export), exportText(target));
          assert.deepEqual(planChanges(after.export, steps).changes, []);
          if (round === 0) document = JSON.stringify({ steps: after.export.steps });
          else assert.equal(JSON.stringify({ steps: after.export.steps }), document);
        }
      }),
      { seed: SEED, numRuns: CASES },
    );
    assert.ok(tried > 0);
  });
});
