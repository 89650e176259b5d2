/**
 * Review finding (fields the instrument has that the export does not show): interface A serves a step's custom
 * liquid settings only when asked (`includeCustomLiquidSettings` of the step endpoints, false by default); the
 * protocol read that export and plan use has no such parameter, and an instrument may leave them out there. A PUT
 * step replaces the step's fields, so an apply's update of such a step (any field changed) sent the step without them
 * and the instrument dropped them: a step's custom liquid settings silently erased by an unrelated change, and the
 * read back (which does not show them either) said all was well. The update now reads the step with its custom
 * liquid settings first (a read: a failure of it stops the apply with nothing sent for that step) and sends back the
 * fields the protocol read did not show, so what the export cannot show an apply cannot remove.
 * A proxy in front of the simulator leaves customLiquidSettings out of GET protocols/{id}, as such an instrument does.
 */
import assert from 'node:assert/strict';

import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

type Msg = Record<string, unknown>;

describe('review: lh-protocol update keeps the fields the protocol read does not show (custom liquid settings)', function () {
  const { sim, make } = useClients();
  let failStepRead = false;
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      const path = pathOf(req);
      if (req.method === 'GET' && /^\/api\/v1\/protocols\/\d+$/.test(path) && up.status === 200) {
        const body = JSON.parse(up.body.toString()) as { steps: Msg[] };
        for (const s of body.steps) delete s.customLiquidSettings;
        answerWith(res, 200, up.headers, JSON.stringify(body));
        return true;
      }
      if (failStepRead && req.method === 'GET' && /\/step\/\d+$/.test(path)) {
        answerWith(res, 503, { 'content-type': 'text/plain' }, 'unavailable');
        return true;
      }
      return false;
    },
  );
  afterEach(function () {
    failStepRead = false;
  });

  const liquids = { aspirate: { liquidClass: 'Glycerol 50%', airGap: 5 }, dispense: { blowOut: true } };

  async function setUp(): Promise<{ pid: number; client: ReturnType<typeof make>; stepId: number }> {
    const client = make({ baseUrl: proxy.url, retries: 0 });
    const pid = sim.addProtocol('Viscous');
    await client.prep.createStep(pid, { name: 'Lid', stepType: 'LidStep' });
    const made = await client.prep.createStep(pid, {
      name: 'Add glycerol',
      stepType: 'AddReagentStep',
      destinations: [{ labware: 'Plate1', wells: 'A1' }],
      liquidLabwareGroupId: 1,
      customLiquidSettings: liquids,
    });
    return { pid, client, stepId: made.id };
  }

  async function apply(client: ReturnType<typeof make>, pid: number): Promise<unknown> {
    const before = await readProtocol(client.runs, pid, 'export');
    assert.equal(before.export.steps[1].customLiquidSettings, undefined, 'the export does not show them');
    const steps = before.export.steps.map((s) => (s.name === 'Add glycerol' ? { ...s, liquidLabwareGroupId: 2 } : s));
    const desired = readDesired({ steps }, 'plan');
    const { plan } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
    return applyPlan(
      { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
      readPlan(JSON.parse(JSON.stringify(plan)), 'apply'),
      'apply',
    );
  }

  it('an update of another field keeps the custom liquid settings on the instrument', async function () {
    const { pid, client, stepId } = await setUp();
    await apply(client, pid);
    const step = await client.prep.getStep(pid, stepId, true);
    assert.equal(step.liquidLabwareGroupId, 2, 'the update was made');
    assert.deepEqual(step.customLiquidSettings, liquids, 'the custom liquid settings are still there');
  });

  it('the step read failing: the apply stops before that update, nothing of it sent (not applied, not unconfirmed)', async function () {
    const { pid, client, stepId } = await setUp();
    failStepRead = true;
    const logged = sim.requests.length;
    const failed = await apply(client, pid).then(
      () => assert.fail('applied'),
      (e: unknown) => e,
    );
    assert.ok(failed instanceof ApplyStopped, String(failed));
    assert.deepEqual(
      failed.notApplied.map((c) => c.action),
      ['update'],
    );
    assert.deepEqual(failed.unconfirmed, []);
    assert.equal(sim.requests.slice(logged).filter((r) => r.method === 'PUT').length, 0, 'no PUT sent');
    failStepRead = false;
    assert.deepEqual((await client.prep.getStep(pid, stepId, true)).customLiquidSettings, liquids);
  });
});
