/**
 * Review finding: an apply's update of a disabled step (a field changed, the step to stay disabled) sent the step's
 * type and own fields without `disabled`, trusting the instrument to keep what a PUT leaves out. interfaces.md lists
 * `disabled` in the step body of PUT step and does not say what a missing one means; an ASP.NET service binding the
 * body to its step DTO reads a missing boolean as false, so such an instrument enabled the step: a step switched off
 * on purpose (a heater out of order) would run in the next run, and the apply reported the read back as "someone
 * else changed it meanwhile". The update now carries the step's `disabled` as it is on the instrument (an enable or
 * disable of the plan follows as its own write), right on either reading of a missing field.
 *
 * The simulator keeps a missing `disabled`; here a request listener makes it an instrument that takes a missing one
 * as false (the step is set enabled before the PUT is served, as the DTO's default would). Seeded property over drawn
 * protocols (every step type, renames, updates, enables and disables, creates, moves; LH_SEED replays a run,
 * LH_CASES sets the number of protocols, 8 by default) and one example a person can read.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { applyPlan, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { type LoggedRequest } from '../../src/simulator';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';
import { currentAndDesired, stepOf } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 8;

describe('review: lh-protocol apply keeps a disabled step disabled on an instrument whose PUT step replaces it', function () {
  this.timeout(60_000);
  const { sim, make } = useClients();
  let stop: (() => void) | undefined;

  beforeEach(function () {
    // PUT …/protocols/{pid}/step without `disabled`: the step as an ASP.NET DTO binds it, disabled = false
    stop = sim.onRequest((entry: LoggedRequest) => {
      const m = /^\/api\/v1\/protocols\/(\d+)\/step$/.exec(entry.path);
      if (entry.method !== 'PUT' || !m || typeof entry.body !== 'object' || entry.body === null) return;
      const body = entry.body as Record<string, unknown>;
      if (Object.keys(body).some((k) => k.toLowerCase() === 'disabled')) return;
      const step = sim.state.protocols.get(Number(m[1]))?.steps.find((s) => s.id === body.id);
      if (step) step.disabled = false;
    });
  });
  afterEach(function () {
    stop?.();
  });

  async function planAndApply(pid: number, given: unknown[]): Promise<{ after: string; target: string; planAfter: number }> {
    const client = make();
    const desired = readDesired(JSON.parse(JSON.stringify({ steps: given })), 'plan');
    const before = await readProtocol(client.runs, pid, 'plan');
    const { target, plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
    const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply');
    await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply');
    const after = await readProtocol(client.runs, pid, 'plan');
    return {
      after: exportText(after.export),
      target: exportText(target),
      planAfter: planChanges(after.export, desired).changes.length,
    };
  }

  it('a disabled Pause step whose duration changes stays disabled; the apply succeeds', async function () {
    const client = make();
    const pid = sim.addProtocol('Disabled step');
    const pause = stepOf({ name: 'Wait for the heater', stepType: 'PauseStep', disabled: true, k: 0 });
    await client.prep.createStep(pid, pause);
    const result = await planAndApply(pid, [{ ...pause, duration: 45 }]);
    assert.equal(result.after, result.target);
    assert.equal(sim.state.protocols.get(pid)?.steps[0].disabled, true, 'the step is still disabled');
  });

  it(`drawn protocols reach the plan's target exactly, disabled steps included (property, seed printed)`, async function () {
    console.log(`      update-keeps-disabled seed: ${SEED}, ${CASES} protocols (LH_SEED=${SEED} LH_CASES=${CASES} replays it)`);
    await fc.assert(
      fc.asyncProperty(currentAndDesired(2, 10), async ({ current, desired }) => {
        const client = make();
        const pid = sim.addProtocol('Generated');
        for (const spec of current) await client.prep.createStep(pid, stepOf(spec));
        const result = await planAndApply(pid, desired);
        assert.equal(result.after, result.target);
        assert.equal(result.planAfter, 0, 'a second plan is empty');
      }),
      { seed: SEED, numRuns: CASES },
    );
  });
});
