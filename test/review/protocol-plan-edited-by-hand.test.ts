/**
 * Review findings: two ways to edit a plan by hand that apply took although "a plan altered after it was made" is
 * refused.
 * - Every change taken out (`changes: []`, base and target kept): apply answered `unchanged`, a success, for a plan
 *   whose target the protocol is not at. A flow recorded the desired protocol as in place.
 * - An update's `fields` edited (the change's step left as made): the target check does not read `fields`, so apply
 *   wrote the update and put the edited list in msg.payload.applied and in the audit trail's why (`update "Pause":
 *   message` for a write that changed the duration), of any length.
 * Now both are refused naming the field, nothing sent; the plan as made applies.
 */
import assert from 'node:assert/strict';

import { type LoggedRequest } from '../../src/simulator';
import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-protocol plan edited by hand', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });
  const writes = (): LoggedRequest[] =>
    sim.requests.filter((r) => r.api === 'A' && r.method !== 'GET' && !r.path.startsWith('/api/v1/authenticate'));

  async function planned(): Promise<{ node: Awaited<ReturnType<typeof load>>; plan: Msg & { changes: Msg[] } }> {
    const node = await load({ operation: 'msg', protocolId: '' });
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const [pause, ...rest] = exported.steps;
    const desired = { steps: [{ ...pause, duration: (pause.duration as number) + 15 }, ...rest] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg & { changes: Msg[] };
    assert.deepEqual(plan.changes, [{ action: 'update', name: pause.name, fields: ['duration'], step: plan.changes[0].step }]);
    return { node, plan };
  }

  it('a plan with its changes taken out is refused (they no longer lead to its target), nothing sent', async function () {
    const { node, plan } = await planned();
    const before = sim.requests.length;
    await node.expectFailure({ operation: 'apply', plan: { ...plan, changes: [] } }, 'plan.changes', /do not lead to its target/);
    assert.equal(writes().length, 0);
    assert.equal(sim.requests.length, before, 'nothing sent');
    // an empty plan as plan makes it (base = target) is still unchanged, nothing sent
    const same = { ...plan, changes: [], target: plan.base };
    assert.equal((await node.run({ operation: 'apply', plan: same })).outcome, 'unchanged');
  });

  it('an update whose fields were edited is refused naming them; the plan as made applies', async function () {
    const { node, plan } = await planned();
    const [update] = plan.changes;
    for (const fields of [['message'], [], ['duration', 'message'], ['x'.repeat(100_000)]]) {
      await node.expectFailure(
        { operation: 'apply', plan: { ...plan, changes: [{ ...update, fields }] } },
        'plan.changes[0].fields',
        /must be the fields the update changes: "duration"/,
      );
    }
    assert.equal(writes().length, 0);
    const done = await node.run({ operation: 'apply', plan });
    assert.equal(done.outcome, 'applied');
    assert.deepEqual(((done.payload as Msg).applied as Msg[])[0].fields, ['duration']);
  });

  it('the refusal of edited fields shows the true ones clipped and escaped (a key of 200,000 characters with a line break)', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const [pause, ...rest] = exported.steps;
    const key = `k\n[error] [lh-server:sim] forged line ${'y'.repeat(200_000)}`;
    const desired = { steps: [{ ...pause, [key]: 1 }, ...rest] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg & { changes: Msg[] };
    const [update] = plan.changes;
    const err = await node.expectFailure(
      { operation: 'apply', plan: { ...plan, changes: [{ ...update, fields: ['message'] }] } },
      'plan.changes[0].fields',
      /must be the fields the update changes: "k\\n\[error\] \[lh-server:sim\] forged line y+…"/,
    );
    const message = String(err.message);
    assert.ok(message.length < 2000, `a message of ${message.length} characters`);
    assert.doesNotMatch(message, /\n/);
    assert.equal(writes().length, 0);
  });

  it('an update of more than 1000 fields, as plan makes it, applies', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const pid = sim.addProtocol('Wide');
    const wide = (value: number): Msg => ({
      name: 'Wide',
      stepType: 'LidStep',
      disabled: false,
      ...Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`f${i}`, value])),
    });
    await node.run({
      operation: 'apply',
      plan: (await node.run({ operation: 'plan', protocolId: pid, payload: { steps: [wide(0)] } })).plan,
    });
    const plan = (await node.run({ operation: 'plan', protocolId: pid, payload: { steps: [wide(1)] } })).plan as Msg & {
      changes: { fields: string[] }[];
    };
    assert.equal(plan.changes[0].fields.length, 1200);
    assert.equal((await node.run({ operation: 'apply', plan })).outcome, 'applied');
  });
});
