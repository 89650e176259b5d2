/**
 * Review finding: a write of an apply that the instrument received but did not answer in time (or answered 5xx, after
 * which it may have done it: the audit trail records such an outcome as unknown) was listed in msg.notApplied: a flow
 * was told a step was not created that the instrument had created. Now such a write's changes are in
 * msg.unconfirmed (and the message says whether they were done is not known), neither applied nor not applied; a
 * new plan from the protocol as it is shows what is left.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;
const actions = (changes: unknown): string[] => (changes as Msg[]).map((c) => String(c.action));

describe('review: lh-protocol apply stopped at a write whose outcome is not known', function () {
  const sim = useInstrument();
  const { load } = configuredNode(
    sim,
    { id: 'protocol', type: 'lh-protocol' },
    { only: ['lh-server', 'lh-protocol'], server: { timeout: 600 } },
  );

  async function planned(): Promise<{ node: Awaited<ReturnType<typeof load>>; plan: Msg; desired: Msg }> {
    const node = await load({ operation: 'msg', protocolId: '' });
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const [pause, reagent, incubate] = exported.steps;
    const desired = {
      steps: [
        { name: 'Close lid', stepType: 'LidStep', disabled: false, position: 'HeaterShaker1' },
        pause,
        incubate,
        { ...reagent, disabled: true },
      ],
    };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
    assert.deepEqual(actions(plan.changes), ['disable', 'create', 'move']);
    return { node, plan, desired };
  }

  it('a create the instrument made but answered too late: in msg.unconfirmed, not in msg.notApplied', async function () {
    const { node, plan, desired } = await planned();
    // the create reaches the instrument, which makes the step and answers one byte every 200 ms (past the timeout)
    const stop = sim.onRequest((r) => {
      if (r.method === 'POST' && r.path.endsWith('/step')) sim.setFaults({ trickleMs: 200 });
    });
    const failed = await node.runFailing({ operation: 'apply', plan });
    stop();
    sim.clearFaults();
    const err = failed._error as Msg;
    assert.match(err.message as string, /Not known whether applied \(1\): create "Close lid"/);
    assert.deepEqual(actions(failed.applied), ['disable']);
    assert.deepEqual(actions(failed.unconfirmed), ['create']);
    assert.deepEqual(actions(failed.notApplied), ['move']);
    assert.ok(
      sim.state.protocols.get(1)?.steps.some((s) => s.name === 'Close lid'),
      'the instrument made the step',
    );
    const next = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
    assert.deepEqual(actions(next.changes), ['move']);
  });

  it('a create answered 500: in msg.unconfirmed, the message says so; a write refused (4xx) is not applied', async function () {
    const { node, plan, desired } = await planned();
    sim.setFaults({ statusRate: 1, statusCode: 500, methods: ['POST'] });
    const failed = await node.runFailing({ operation: 'apply', plan });
    assert.match((failed._error as Msg).message as string, /did not answer that write|not known/i);
    assert.deepEqual(actions(failed.unconfirmed), ['create']);
    assert.deepEqual(actions(failed.notApplied), ['move']);
    sim.clearFaults();
    // refused: the instrument answered that it did not do it
    const again = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
    sim.setFaults({ statusRate: 1, statusCode: 409, methods: ['POST'] });
    const refused = await node.runFailing({ operation: 'apply', plan: again });
    sim.clearFaults();
    assert.deepEqual(refused.unconfirmed, []);
    assert.deepEqual(actions(refused.notApplied), ['create', 'move']);
  });
});
