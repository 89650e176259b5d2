/**
 * Review (property): apply refuses a plan whose update `fields` are not the fields its step changes from the protocol
 * as read. An honest plan, applied without edits, must never be refused by that check, also when the instrument
 * answers its protocol with every key in another order (nested values too) and its own fields and the common ones in
 * another letter case (an ASP.NET service: `Name`, `StepType`, `Position`), differently from one read to the next
 * (the read of plan and the read of apply). A proxy in front of the simulator rewrites GET protocols/{id}.
 * Random current and desired protocols (renames, deletes, creates, field changes, enable/disable, reorders): plan +
 * apply reaches the desired protocol, a second plan is empty. The seed is printed (LH_SEED=<n> replays it); LH_CASES
 * sets the number of protocols (8).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { STEP_VARIANT_FIELDS } from '../../src/contract/instrument-contract';
import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';
import { currentAndDesired, stepOf } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 8;

type Json = Record<string, unknown>;
const COMMON = new Set(['id', 'name', 'steptype', 'disabled', 'steporder']);
const upper = (key: string): string => key.charAt(0).toUpperCase() + key.slice(1);

/** Every object's keys in reverse order, at any depth. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversed((value as Json)[key]);
  return out;
}

/** A step as an ASP.NET service may write it: common and known fields of its type with a capital first letter. */
function spelledOtherwise(step: Json): Json {
  const known = new Set(
    Object.keys((STEP_VARIANT_FIELDS as Record<string, Record<string, unknown> | undefined>)[String(step.stepType)] ?? {}).map(
      (k) => k.toLowerCase(),
    ),
  );
  const out: Json = {};
  for (const [key, value] of Object.entries(step)) {
    const lower = key.toLowerCase();
    out[COMMON.has(lower) || known.has(lower) ? upper(key) : key] = value;
  }
  return out;
}

describe('review: an honest plan is applied when the instrument reorders and re-cases its fields (property)', function () {
  this.timeout(120_000);
  const { sim, make } = useClients();
  let reads = 0;

  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      if (req.method !== 'GET' || !/\/protocols\/\d+$/.test(pathOf(req)) || up.status !== 200) return false;
      const body = JSON.parse(up.body.toString('utf8')) as Json;
      const n = reads++;
      // one read spelled so, the next otherwise: plan's read and apply's differ in key order and letter case
      const steps = (body.steps as Json[]).map((s) => (n % 2 === 0 ? spelledOtherwise(s) : s));
      const rewritten = { ...body, steps };
      answerWith(res, up.status, up.headers, JSON.stringify(n % 2 === 0 ? reversed(rewritten) : rewritten));
      return true;
    },
  );

  it('plan + apply reaches the desired protocol, a second plan is empty', async function () {
    console.log(`      protocol spelled-otherwise seed: ${SEED}, ${CASES} protocols (LH_SEED=${SEED} replays it)`);
    const client = make({ baseUrl: proxy.url });
    let updates = 0;
    await fc.assert(
      fc.asyncProperty(currentAndDesired(2, 10), async ({ current, desired: given }) => {
        const pid = sim.addProtocol('Generated');
        for (const spec of current) await client.prep.createStep(pid, stepOf(spec));
        const desired = readDesired(JSON.parse(JSON.stringify({ steps: given })), 'plan');
        const before = await readProtocol(client.runs, pid, 'plan');
        const { target, changes, plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
        updates += changes.filter((c) => c.action === 'update').length;
        const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply'); // as it travels in msg.plan
        await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply');
        const after = await readProtocol(client.runs, pid, 'plan');
        assert.equal(exportText(after.export), exportText(target));
        assert.deepEqual(planChanges(after.export, desired).changes, []);
      }),
      { seed: SEED, numRuns: CASES },
    );
    assert.ok(reads > 0, 'the protocol was read through the proxy');
    if (CASES >= 8) assert.ok(updates > 0, 'some plan updated a step (its fields checked)');
  });
});
