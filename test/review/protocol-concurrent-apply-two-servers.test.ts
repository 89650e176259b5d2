/**
 * Review finding: lh-protocol serialises applies to one protocol per client (its PrepApi), but every lh-server node has
 * a client of its own. Two lh-server nodes of one instrument (two users' config nodes, a copied flow) applying the
 * same plan at once both read the base, both passed the "changed since the plan" check and both wrote: the create
 * (a POST, not idempotent) was made twice and the protocol got a step "Lid (2)". The applies now wait for each other
 * per instrument (interface A's URL) and protocol: the second reads the protocol after the first and is refused.
 */
import assert from 'node:assert/strict';

import { withActor } from '../../src/audit';
import { LhError } from '../../src/client';
import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

describe('review: one plan applied at once through two lh-server nodes of one instrument', function () {
  const suite = useClients();

  it('the protocol gets the change once; the second apply is refused as changed since the plan', async function () {
    const one = suite.make();
    const two = suite.make();
    const read = await readProtocol(one.runs, 1, 'plan');
    await readProtocol(two.runs, 1, 'plan'); // both logged in: the applies start together
    const desired = readDesired({ steps: [...read.export.steps, { name: 'Lid', stepType: 'LidStep', disabled: false }] }, 'plan');
    const { plan } = planned(read.export, desired, { protocolId: 1, instrument: one.baseUrl });
    const apply = (c: typeof one): Promise<unknown> =>
      applyPlan({ prep: c.prep, runs: c.runs, audited: (why, work) => withActor({ why }, work) }, plan, 'apply');
    const outcomes = await Promise.allSettled([apply(one), apply(two)]);
    const after = await readProtocol(one.runs, 1, 'check');
    assert.deepEqual(
      after.export.steps.map((s) => s.name),
      desired.map((d) => d.name),
      'the step was created once',
    );
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult | undefined;
    assert.ok(refused?.reason instanceof LhError && refused.reason.kind === 'changed', String(refused?.reason));
  });
});
