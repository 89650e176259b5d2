/**
 * Review finding: plan of a protocol the instrument holds with thousands of steps (lh-steps creates any number) to a
 * small desired protocol made more changes than an apply takes (5000), and refused with "plan.changes must be an
 * array of at most 5000 changes": a field the user never wrote, and no word of why. Now the refusal says how many
 * steps the protocol has, how many changes the plan would take and what to do; nothing is sent.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

describe('review: lh-protocol plan of a protocol with more steps than a plan can change', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });

  it('is refused naming the protocol, its steps and the bound, nothing sent', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const pid = sim.addProtocol('Huge');
    const protocol = sim.state.protocols.get(pid);
    assert.ok(protocol);
    for (let i = 0; i < 5001; i++) {
      protocol.steps.push({ stepType: 'LidStep', id: 100_000 + i, name: `Lid ${i}`, stepOrder: i + 1, disabled: false });
    }
    const writes = (): number =>
      sim.requests.filter((r) => r.method !== 'GET' && !r.path.startsWith('/api/v1/authenticate')).length;
    await node.expectFailure(
      { operation: 'plan', protocolId: pid, payload: { steps: [] } },
      'steps',
      new RegExp(`protocol ${pid} has 5001 steps: the plan to the desired protocol takes 5001 changes, more than the 5000`),
    );
    assert.equal(writes(), 0, 'nothing written');
  });
});
