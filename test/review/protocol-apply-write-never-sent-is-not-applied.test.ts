/**
 * Review finding: apply put a write in msg.unconfirmed ("the instrument received that write but did not say whether
 * it made it") when the write was never sent: its audit intent was not on disk before the deadline (a slow or
 * stalled disk), so the transport never asked the instrument ("create-step was not sent: …") and the audit trail
 * records the outcome not-sent. The error's kind (timeout) was all apply looked at. Such a write is in
 * msg.notApplied now, as the audit trail says. Real HTTP to the simulator; an audit hook holds the create's intent.
 */
import assert from 'node:assert/strict';

import { type AuditHook, type AuditOutcome } from '../../src/client';
import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

describe('review: lh-protocol apply of a write never sent (its audit intent not durable in time)', function () {
  this.timeout(20_000);
  const { sim, make } = useClients();

  it('is in notApplied, not unconfirmed, as the audit trail records it (not-sent)', async function () {
    const outcomes: { operation: string; result: string }[] = [];
    const held: (() => void)[] = [];
    const audit: AuditHook = {
      intent: (request) => ({
        id: `i${outcomes.length}-${request.operation}`,
        // the create's intent is not durable until the test lets it be (a stalled disk); the others at once
        durable: request.operation === 'create-step' ? new Promise<void>((resolve) => held.push(resolve)) : Promise.resolve(),
      }),
      outcome: (_id, operation, outcome: AuditOutcome) => {
        outcomes.push({ operation, result: outcome.result });
        return Promise.resolve();
      },
    };
    const client = make({ audit, timeoutMs: 500, retries: 0 });
    const pid = sim.addProtocol('Never sent');
    const before = await readProtocol(client.runs, pid, 'plan');
    const desired = readDesired({ steps: [{ name: 'Close lid', stepType: 'LidStep', position: 'HeaterShaker1' }] }, 'plan');
    const { plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
    const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply');
    const failed = await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply').then(
      () => assert.fail('applied'),
      (e: unknown) => e,
    );
    for (const release of held) release();
    await client.transport.outcomesWritten();
    assert.ok(failed instanceof ApplyStopped, String(failed));
    assert.match(failed.message, /create-step was not sent/);
    assert.deepEqual(outcomes, [{ operation: 'create-step', result: 'not-sent' }]);
    assert.equal(sim.state.protocols.get(pid)?.steps.length, 0, 'the instrument was never asked');
    assert.deepEqual(
      failed.unconfirmed.map((c) => c.action),
      [],
      'a write the audit trail records as not sent is not "not known whether applied"',
    );
    assert.deepEqual(
      failed.notApplied.map((c) => c.action),
      ['create'],
    );
    assert.doesNotMatch(failed.message, /did not say whether it made it/);
  });
});
