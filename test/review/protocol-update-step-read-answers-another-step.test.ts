/**
 * Review finding (the read before an update): an apply's update first reads the step with its custom liquid settings
 * and sends back the fields the protocol read did not show. That read was trusted whatever it answered: an array or a
 * string (a proxy, a gateway) gave no fields to keep and the PUT went on without them, erasing the custom liquid
 * settings the read was there to keep; a step of another type (changed on the instrument since the check before the
 * writes) or another id had its fields sent with the plan's step. Now such a read stops the apply before that update,
 * nothing of it sent, saying what the read answered. A proxy in front of the simulator leaves customLiquidSettings out
 * of GET protocols/{id} (as such an instrument does) and rewrites the step read as each case draws.
 */
import assert from 'node:assert/strict';

import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

type Msg = Record<string, unknown>;

describe('review: lh-protocol update stops when the step read before it answers no step, or another one', function () {
  const { sim, make } = useClients();
  let rewrite: ((step: Msg) => unknown) | undefined;
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
      if (rewrite && req.method === 'GET' && /\/step\/\d+$/.test(path) && up.status === 200) {
        answerWith(res, 200, up.headers, JSON.stringify(rewrite(JSON.parse(up.body.toString()) as Msg)));
        return true;
      }
      return false;
    },
  );
  afterEach(function () {
    rewrite = undefined;
  });

  const liquids = { aspirate: { liquidClass: 'Glycerol 50%', airGap: 5 }, dispense: { blowOut: true } };

  async function applyWith(answer: (step: Msg) => unknown): Promise<{ failed: unknown; puts: number; after: Msg }> {
    const client = make({ baseUrl: proxy.url, retries: 0 });
    const pid = sim.addProtocol('Viscous');
    const made = await client.prep.createStep(pid, {
      name: 'Add glycerol',
      stepType: 'AddReagentStep',
      destinations: [{ labware: 'Plate1', wells: 'A1' }],
      liquidLabwareGroupId: 1,
      customLiquidSettings: liquids,
    });
    const before = await readProtocol(client.runs, pid, 'export');
    const steps = before.export.steps.map((s) => ({ ...s, liquidLabwareGroupId: 2 }));
    const { plan } = planned(before.export, readDesired({ steps }, 'plan'), { protocolId: pid, instrument: client.baseUrl });
    rewrite = answer;
    const logged = sim.requests.length;
    const failed = await applyPlan(
      { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
      readPlan(JSON.parse(JSON.stringify(plan)), 'apply'),
      'apply',
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    rewrite = undefined;
    const puts = sim.requests.slice(logged).filter((r) => r.method === 'PUT').length;
    return { failed, puts, after: (await client.prep.getStep(pid, made.id, true)) as Msg };
  }

  const cases: [string, (step: Msg) => unknown, RegExp][] = [
    ['an array', (step) => [step], /answered an array, not a step/],
    ['a string', () => 'ok', /answered a JSON string, not a step/],
    ['a number', () => 1, /answered a JSON number, not a step/],
    [
      'another step type',
      (step) => ({ ...step, stepType: 'PauseStep', duration: 60 }),
      /answered a PauseStep, not the AddReagentStep/,
    ],
    ['another step', (step) => ({ ...step, id: 99_999 }), /answered another step \(id 99999\)/],
  ];
  for (const [what, answer, said] of cases) {
    it(`the read answering ${what}: stopped before the update, nothing of it sent, the settings kept`, async function () {
      const { failed, puts, after } = await applyWith(answer);
      assert.ok(failed instanceof ApplyStopped, String(failed));
      assert.deepEqual(
        failed.notApplied.map((c) => c.action),
        ['update'],
      );
      assert.deepEqual(failed.unconfirmed, []);
      assert.match(failed.message, said);
      assert.equal(puts, 0, 'no PUT sent');
      assert.deepEqual(after.customLiquidSettings, liquids, 'the custom liquid settings are still there');
      assert.equal(after.liquidLabwareGroupId, 1, 'the step as it was');
    });
  }

  it('the read answering the step (type spelled without "Step", another letter case): the update is made', async function () {
    const { failed, puts, after } = await applyWith((step) => ({ ...step, stepType: 'addreagent' }));
    assert.equal(failed, undefined, String(failed));
    assert.equal(puts, 1);
    assert.equal(after.liquidLabwareGroupId, 2);
    assert.deepEqual(after.customLiquidSettings, liquids);
  });
});
