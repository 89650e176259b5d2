/**
 * Review check (an export file edited by hand): drawn exports of drawn protocols, each edited the ways a person or a
 * script gets it wrong (a key dropped, a value of another type, a step repeated, an instrument id or stepOrder
 * added, a key in another letter case, a key named __proto__ or constructor, a name too long or blank, nesting too
 * deep, steps not an array, an unknown top-level key), then given to plan and, when plan takes it, applied on the
 * simulator. Invariant: either plan refuses it before anything is sent, with a validation error whose message starts
 * with the field it names (payload…) and a rule; or the plan applies without the instrument refusing a write and
 * the protocol is then exactly the plan's target (a second plan empty). Never an apply that stops midway on input
 * plan took. Seeded (LH_SEED replays a run, LH_CASES sets the number of files, 30 by default).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';
import { protocolSpecs, stepOf } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 30;

type Json = Record<string, unknown>;

const EDITS = [
  'drop-name',
  'drop-stepType',
  'name-number',
  'name-blank',
  'name-too-long',
  'stepType-unknown',
  'disabled-text',
  'repeat-step',
  'add-id',
  'add-stepOrder',
  'add-makeNameUnique',
  'known-field-recased',
  'own-key-capital',
  'proto-key',
  'constructor-key',
  'too-deep',
  'steps-object',
  'typed-field-wrong',
  'unknown-field',
  'top-level-extra',
  'renamedFrom-self',
  'renamedFrom-twice',
] as const;
type Edit = (typeof EDITS)[number];

/** The file with one edit at step `at` (steps: a copy). */
function edited(file: { name: string; steps: Json[] }, edit: Edit, at: number): unknown {
  const steps = file.steps.map((s) => ({ ...s }));
  const i = at % steps.length;
  const s = steps[i];
  const doc: Json = { name: file.name, steps };
  switch (edit) {
    case 'drop-name':
      delete s.name;
      break;
    case 'drop-stepType':
      delete s.stepType;
      break;
    case 'name-number':
      s.name = 7;
      break;
    case 'name-blank':
      s.name = '  ';
      break;
    case 'name-too-long':
      s.name = 'n'.repeat(201);
      break;
    case 'stepType-unknown':
      s.stepType = 'CentrifugeStep';
      break;
    case 'disabled-text':
      s.disabled = 'false';
      break;
    case 'repeat-step':
      steps.splice(i, 0, { ...s });
      break;
    case 'add-id':
      s.id = 12;
      break;
    case 'add-stepOrder':
      s.stepOrder = 1;
      break;
    case 'add-makeNameUnique':
      s.makeNameUnique = true;
      break;
    case 'known-field-recased':
      s.stepType = 'PauseStep';
      s.Duration = 5;
      break;
    case 'own-key-capital':
      s.Setting = { level: 1 };
      break;
    case 'proto-key':
      return JSON.parse(JSON.stringify(doc).replace('"steps":[{', '"steps":[{"__proto__":{"x":1},'));
    case 'constructor-key':
      Object.defineProperty(s, 'constructor', { value: 1, enumerable: true, writable: true, configurable: true });
      break;
    case 'too-deep': {
      let d: unknown = 1;
      for (let k = 0; k < 40; k++) d = { a: d };
      s.deep = d;
      break;
    }
    case 'steps-object':
      doc.steps = { ...steps };
      break;
    case 'typed-field-wrong':
      s.stepType = 'HeatShakeStep';
      s.rpm = '500';
      break;
    case 'unknown-field':
      s.addedByHand = { note: 'kept', list: [1, 'two', null] };
      break;
    case 'top-level-extra':
      doc.version = 2;
      break;
    case 'renamedFrom-self':
      s.renamedFrom = s.name;
      break;
    case 'renamedFrom-twice':
      s.renamedFrom = 'Old';
      if (steps.length > 1) steps[(i + 1) % steps.length].renamedFrom = 'Old';
      break;
  }
  return JSON.parse(JSON.stringify(doc, (_k, v: unknown) => v)) as unknown; // as a file read and parsed gives it
}

describe('review: an export file edited by hand: plan refuses it naming the field, or it applies exactly (seeded)', function () {
  this.timeout(60_000);
  const { sim, make } = useClients();

  it('either refused before anything is sent (field, rule) or applied to exactly its target', async function () {
    console.log(`      hand-edited-export seed: ${SEED}, ${CASES} files (LH_SEED=${SEED} LH_CASES=${CASES} replays it)`);
    const outcomes = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(protocolSpecs(1, 6), fc.constantFrom(...EDITS), fc.nat(50), async (specs, edit, at) => {
        const client = make();
        const pid = sim.addProtocol('Edited by hand');
        for (const spec of specs) await client.prep.createStep(pid, stepOf(spec));
        const before = await readProtocol(client.runs, pid, 'export');
        const file = edited(JSON.parse(JSON.stringify(before.export)) as { name: string; steps: Json[] }, edit, at);

        const logged = sim.requests.length;
        let desired;
        try {
          desired = readDesired(file, 'lh-protocol plan');
        } catch (err) {
          assert.ok(err instanceof LhError, `${edit}: ${String(err)}`);
          assert.equal(err.kind, 'validation', `${edit}: ${err.message}`);
          const field = err.field ?? '';
          assert.ok(field.startsWith('payload'), `${edit}: field ${field}`);
          assert.ok(err.message.startsWith(`${field} `), `${edit}: the message names its field: ${err.message}`);
          assert.ok(err.message.length > field.length + 10, `${edit}: a rule is said: ${err.message}`);
          assert.equal(sim.requests.length, logged, `${edit}: nothing sent`);
          outcomes.set(edit, 'refused');
          return;
        }
        outcomes.set(edit, 'taken');
        const { target, plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
        const plan = readPlan(JSON.parse(JSON.stringify(made)), 'lh-protocol apply');
        await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply');
        const after = await readProtocol(client.runs, pid, 'export');
        assert.equal(exportText(after.export), exportText(target), `${edit}: the protocol is the plan's target`);
        assert.deepEqual(planChanges(after.export, desired).changes, [], `${edit}: a second plan is empty`);
      }),
      { seed: SEED, numRuns: CASES },
    );
    console.log(`      ${[...outcomes].map(([e, o]) => `${e}: ${o}`).join(', ')}`);
  });
});
