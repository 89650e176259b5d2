/**
 * Review check (the brief's "a plan made against one state and applied after the instrument changed"): a plan made,
 * then any one edit on the instrument through interface A (rename, a field changed, an unknown field added, enable or
 * disable, delete, create, a reorder), then the plan applied: refused with LH_CHANGED (kind `changed`), nothing
 * written, the protocol as the edit left it; a new plan from there applies and reaches the desired protocol. An edit
 * that changes nothing the export shows (a key's letter case, the step type without its suffix) is not a change.
 * Seeded property over drawn protocols (LH_SEED replays a run, LH_CASES sets the number of cases, 10 by default).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';
import { currentAndDesired, stepOf } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 10;

const EDITS = ['rename', 'field', 'unknown-field', 'toggle', 'delete', 'create', 'reorder'] as const;

describe('review: lh-protocol never applies a plan made before an edit on the instrument (property, real HTTP)', function () {
  this.timeout(60_000);
  const { sim, make } = useClients();

  it('any one edit between plan and apply: LH_CHANGED, nothing written; a new plan completes it', async function () {
    console.log(`      stale-plan seed: ${SEED}, ${CASES} cases (LH_SEED=${SEED} LH_CASES=${CASES} replays it)`);
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        currentAndDesired(2, 8),
        fc.constantFrom(...EDITS),
        fc.nat(100),
        async ({ current, desired: given }, edit, at) => {
          seen.add(edit);
          const client = make();
          const pid = sim.addProtocol('Edited meanwhile');
          for (const spec of current) await client.prep.createStep(pid, stepOf(spec));
          const desired = readDesired(JSON.parse(JSON.stringify({ steps: given })), 'plan');
          const before = await readProtocol(client.runs, pid, 'plan');
          const { plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
          const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply');

          // one edit on the instrument, as a person on its screen or another client makes it
          const step = before.steps[at % before.steps.length];
          switch (edit) {
            case 'rename':
              await client.prep.renameStep(pid, step.id, `${step.step.name} (edited)`);
              break;
            case 'field':
            case 'unknown-field': {
              const { disabled: _d, ...body } = step.step;
              const extra = edit === 'field' ? { note: `edited ${at}` } : { addedByTheInstrument: { at } };
              await client.prep.updateStep(pid, { ...body, ...extra, id: step.id });
              break;
            }
            case 'toggle':
              await client.prep.setStepDisabled(pid, step.id, !step.step.disabled);
              break;
            case 'delete':
              await client.prep.deleteStep(pid, step.id);
              break;
            case 'create':
              await client.prep.createStep(pid, { name: `Added ${at}`, stepType: 'LidStep', stepOrder: 1 });
              break;
            case 'reorder':
              await client.prep.reorderSteps(pid, [{ stepId: step.id, stepOrder: step === before.steps[0] ? 2 : 1 }]);
              break;
          }
          const edited = exportText((await readProtocol(client.runs, pid, 'plan')).export);
          assert.notEqual(edited, exportText(before.export), `the ${edit} changed the protocol`);

          const logged = sim.requests.length;
          const refused = await applyPlan(
            { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
            plan,
            'apply',
          ).then(
            (r) => assert.fail(`a stale plan was applied after a ${edit}: ${r.outcome}`),
            (e: unknown) => e as { kind?: string; message?: string },
          );
          assert.equal(refused.kind, 'changed', String(refused.message));
          const writes = sim.requests.slice(logged).filter((r) => r.method !== 'GET');
          assert.deepEqual(
            writes.map((r) => `${r.method} ${r.path}`),
            [],
            'nothing written',
          );
          const now = await readProtocol(client.runs, pid, 'plan');
          assert.equal(exportText(now.export), edited, 'the protocol as the edit left it');

          // a new plan from here applies and reaches the desired protocol
          const again = planned(now.export, desired, { protocolId: pid, instrument: client.baseUrl, id: `again-${pid}` });
          await applyPlan(
            { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
            readPlan(JSON.parse(JSON.stringify(again.plan)), 'apply'),
            'apply',
          );
          const after = await readProtocol(client.runs, pid, 'plan');
          assert.equal(exportText(after.export), exportText(again.target));
          assert.deepEqual(planChanges(after.export, desired).changes, []);
        },
      ),
      { seed: SEED, numRuns: CASES },
    );
    assert.ok(seen.size > 1);
  });

  it('an edit the export does not show (a key in another letter case, the step type without Step) is no change', async function () {
    const client = make();
    const pid = sim.addProtocol('Re-cased');
    const made = await client.prep.createStep(pid, { name: 'Wait', stepType: 'PauseStep', duration: 5, message: 'm' });
    const before = await readProtocol(client.runs, pid, 'plan');
    const desired = readDesired({ steps: [{ name: 'Wait', stepType: 'PauseStep', duration: 9, message: 'm' }] }, 'plan');
    const { plan } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
    // the instrument now answers the same step in another spelling (its type without Step, a key in PascalCase)
    const held = sim.state.protocols.get(pid)?.steps.find((s) => s.id === made.id) as unknown as Record<string, unknown>;
    held.stepType = 'Pause';
    delete held.duration;
    held.Duration = 5;
    const result = await applyPlan(
      { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
      readPlan(JSON.parse(JSON.stringify(plan)), 'apply'),
      'apply',
    );
    assert.equal(result.outcome, 'applied');
    assert.equal((await readProtocol(client.runs, pid, 'plan')).export.steps[0].duration, 9);
  });
});
