/**
 * Review finding: an apply whose every write was made, but whose read back of the protocol failed (the instrument
 * answering 503, or not at all, just then), failed with the read's error alone: no msg.applied, no msg.notApplied, a
 * message about a GET. A flow (or a person) took it as "nothing happened" and applied the plan again, which was then
 * refused as changed since the plan, though the instrument had exactly what the plan said. Now the error says every
 * change was written and only the read back failed, with msg.applied (all of them) and msg.notApplied (none).
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-protocol apply whose read back fails after every write', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });

  it('says every change was written (msg.applied all, msg.notApplied none); a new plan is empty', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const [pause, reagent, incubate] = exported.steps;
    const desired = {
      steps: [incubate, { ...pause, name: 'Pause for a look', renamedFrom: pause.name }, { ...reagent, disabled: true }],
    };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as { changes: Msg[] };
    const actions = plan.changes.map((c) => c.action);
    assert.deepEqual(actions, ['rename', 'disable', 'move']);
    // the instrument stops answering reads once the last write (the reorder call) has reached it
    const stop = sim.onRequest((r) => {
      if (r.method === 'PUT' && r.path.endsWith('/reorder-step'))
        sim.setFaults({ statusRate: 1, statusCode: 503, methods: ['GET'] });
    });
    const failed = await node.runFailing({ operation: 'apply', plan });
    stop();
    sim.clearFaults();
    const err = failed._error as Msg;
    assert.match(err.message as string, /every change was written.*read/i);
    assert.deepEqual(
      (failed.applied as Msg[] | undefined)?.map((c) => c.action),
      actions,
    );
    assert.deepEqual(failed.notApplied, []);
    // the instrument has what the plan said: a new plan is empty
    assert.deepEqual(((await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg).changes, []);
  });
});
