/**
 * Issue 17 point 2 (review 2). Review finding (medium, design gap): msg.confirmLoading confirms *whatever* run waits at Loading, also one this
 * Node-RED never created (an operator preparing a run at the instrument's screen, another Node-RED). load-complete
 * starts that run, possibly with a deck the operator has not finished loading. README: "With Stop at loading for an
 * operator it outputs the load instructions; a later start with msg.confirmLoading = true continues" (that run).
 */
import assert from 'node:assert/strict';

import { until } from '../support/until';
import { useRunNode } from './lh-run.support';

describe('lh-run: msg.confirmLoading for a run this Node-RED did not leave at Loading (issue 17 point 2, review 2)', function () {
  const { sim, run } = useRunNode();

  it('does not send load-complete for a run created elsewhere', async function () {
    // an operator creates a run at the instrument (not through this Node-RED); it waits at Loading
    sim.runs.create({ protocolId: 1, simulate: true }, 'operator');
    await until(
      () => sim.runs.status().protocolRunState === 3 || sim.runs.status().protocolRunState === 'Loading',
      'Loading',
      10000,
    );
    // the start's own end, not a timer's: the refusal reaches the Catch node (run() then rejects, naming it); counting
    // the requests after a 4 s timer instead counted them before a slow start had sent what it would send
    const msg = await run({ operation: 'start' }, { confirmLoading: true }).catch((e: Error) => ({ outcome: e.message }));
    const sent = sim.requests.filter((r) => r.path === '/api/v1/protocol-run/load-complete').length;
    assert.equal(sent, 0, `load-complete sent for the operator's run; outcome ${String(msg.outcome)}`);
    assert.match(String(msg.outcome), /confirmLoading: .* was not left there by a start of this Node-RED/);
  });
});
