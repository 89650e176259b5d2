/**
 * Review finding: apply sets msg.applied and msg.notApplied when it stops midway, and never took them away. A flow
 * that retries (Catch → wait → the same msg back to apply) got, for the retry refused as changed since the plan
 * (nothing written), the first attempt's lists as if this apply had made those writes; and, once a new plan on that
 * msg applied, `outcome: "applied"` beside the first attempt's msg.notApplied. Now apply takes both (and
 * msg.outcome) off the msg before it starts: they always tell about this apply.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-protocol apply retried with the msg of a stopped apply', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });

  it('its msg.applied, msg.notApplied and msg.outcome tell about this apply only', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const [pause, reagent, incubate] = exported.steps;
    const desired = {
      steps: [incubate, { ...pause, name: 'Pause for a look', renamedFrom: pause.name }, { ...reagent, disabled: true }],
    };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
    // a run of the protocol starts on the touchscreen while the second write is on its way
    let seen = 0;
    const stop = sim.onRequest((r) => {
      if (r.method !== 'GET' && r.path.startsWith('/api/v1/protocols/1/step') && ++seen === 2)
        sim.runs.create({ protocolId: 1 }, 'operator');
    });
    const first = await node.runFailing({ operation: 'apply', plan, outcome: 'unchanged' });
    stop();
    assert.equal((first.applied as Msg[]).length, 1);
    assert.equal((first.notApplied as Msg[]).length, 2);
    sim.runs.reset(); // the run ends

    // the same msg retried: refused (the protocol changed since the plan), nothing written by this apply
    const retried = await node.runFailing(first);
    assert.equal((retried._error as Msg).kind, 'changed');
    assert.equal(retried.applied, undefined);
    assert.equal(retried.notApplied, undefined);
    assert.equal(retried.unconfirmed, undefined);
    assert.equal(retried.outcome, undefined);

    // a new plan on that msg applies: nothing is left not applied
    retried.plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan;
    const done = await node.run(retried);
    assert.equal(done.outcome, 'applied');
    assert.equal(done.notApplied, undefined);
    assert.equal(done.applied, undefined);
  });
});
