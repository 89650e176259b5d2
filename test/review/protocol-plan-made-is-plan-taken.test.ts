/**
 * Review finding: plan emitted plans that apply refused as "not a plan". readPlan took at most 3000 changes, but a
 * protocol of the 1000 steps the README allows, each step renamed, changed, disabled and the order reversed, plans
 * 3999 changes; and it took names of at most 200 characters in every change, also in a delete's name and a rename's
 * `from`, which name a step as the instrument has it (lh-steps writes names of up to 1000 characters): such a step
 * could be neither deleted nor renamed to a shorter name. A person approved a plan that apply then refused.
 * Property (seeded PRNG, the seed printed; LH_SEED=<n> replays it): every plan planChanges makes, sent through a msg,
 * is read back by readPlan unchanged.
 */
import assert from 'node:assert/strict';

import { canonicalStep, type ProtocolExport, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { makePlan, readPlan } from '../../src/nodes/lh-protocol/plan';
import { Rng } from '../support/prng';
import { planned as plannedOn } from '../support/protocol-plan';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

function planned(current: ProtocolExport, given: unknown): ReturnType<typeof makePlan> {
  return plannedOn(current, readDesired(given, 'plan'), { protocolId: 1, instrument: 'http://lh.example:8080' }).plan;
}

describe('review: lh-protocol plans are ones apply takes', function () {
  this.timeout(60_000);

  it('a 1000-step protocol renamed, changed, disabled and reversed step by step: 3999 changes, taken', function () {
    const current: ProtocolExport = {
      name: 'P',
      steps: Array.from({ length: 1000 }, (_, i) => canonicalStep(`S${i}`, 'PauseStep', false, { duration: i })),
    };
    const given = {
      steps: Array.from({ length: 1000 }, (_, j) => {
        const i = 999 - j;
        return { name: `T${i}`, renamedFrom: `S${i}`, stepType: 'PauseStep', disabled: true, duration: i + 1000 };
      }),
    };
    const plan = planned(current, given);
    assert.equal(plan.changes.length, 3999);
    assert.deepEqual(readPlan(JSON.parse(JSON.stringify(plan)), 'apply'), plan);
  });

  it('a step whose name on the instrument is longer than 200 characters can be deleted, or renamed to a shorter one', function () {
    const long = 'Mix '.repeat(200); // 800 characters, as lh-steps may name a step
    const current: ProtocolExport = {
      name: 'P',
      steps: [canonicalStep(long, 'LidStep', false, {}), canonicalStep('Other', 'LidStep', false, {})],
    };
    for (const given of [
      { steps: [{ name: 'Other', stepType: 'LidStep' }] },
      {
        steps: [
          { name: 'Mix', renamedFrom: long, stepType: 'LidStep' },
          { name: 'Other', stepType: 'LidStep' },
        ],
      },
    ]) {
      const plan = planned(current, given);
      assert.equal(plan.changes.length, 1);
      assert.deepEqual(readPlan(JSON.parse(JSON.stringify(plan)), 'apply'), plan);
    }
  });

  it('property: every plan made is read back unchanged from a msg', function () {
    console.log(`      protocol-plan-taken seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    for (let n = 0; n < 30; n++) {
      const size = rng.chance(0.3) ? rng.int(900, 1000) : rng.int(0, 40);
      const nameOf = (i: number): string => (rng.chance(0.05) ? `${i} ${'x'.repeat(rng.int(200, 990))}` : `S${i}`);
      const current: ProtocolExport = {
        name: 'P',
        steps: Array.from({ length: size }, (_, i) => canonicalStep(nameOf(i), 'PauseStep', rng.chance(0.5), { duration: i })),
      };
      const kept = current.steps.filter(() => rng.chance(0.9));
      const steps = kept.map((s, i) => {
        const renamed = rng.chance(0.7);
        return {
          name: renamed ? `T${i}` : s.name.slice(0, 200),
          ...(renamed ? { renamedFrom: s.name } : {}),
          stepType: 'PauseStep',
          disabled: rng.chance(0.5),
          duration: rng.chance(0.7) ? rng.int(0, 9) : s.duration,
        };
      });
      for (let i = steps.length; i > 1; i--) {
        const j = rng.below(i);
        if (rng.chance(0.8)) [steps[i - 1], steps[j]] = [steps[j], steps[i - 1]];
      }
      const given = {
        steps: [
          ...steps,
          ...Array.from({ length: rng.int(0, 1000 - steps.length) % 50 }, (_, i) => ({ name: `New ${i}`, stepType: 'LidStep' })),
        ],
      };
      const plan = planned(current, given);
      assert.deepEqual(readPlan(JSON.parse(JSON.stringify(plan)), 'apply'), plan, `case ${n} (seed ${SEED})`);
    }
  });
});
