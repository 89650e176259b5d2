/**
 * Review lead (protocols as code): two Node-REDs applying one plan to one instrument at once. Applies wait for each
 * other only within one Node-RED (the instrument's home); another process passes the busy and changed checks before
 * either writes. What the README now says, pinned here: both make the plan's writes, so a step to create is created
 * twice (a step to delete is refused to the second), and the later of the two fails — its delete refused, or its
 * read back differing from its target — so never do both report "applied" when the protocol is not the plan's target;
 * plan then refuses the protocol, naming the step twice named. Two processes are two homes: the test forgets the
 * homes between the two applies (as a second Node-RED has its own), over real HTTP against the simulator.
 */
import assert from 'node:assert/strict';

import { resetHomes } from '../../src/instrument';
import { applyPlan, readProtocol, requireUniqueNames } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';

describe('review: lh-protocol, one plan applied by two Node-REDs at once', function () {
  this.timeout(60000);
  const { sim, make } = useClients();
  const audited = <R>(_why: unknown, work: () => Promise<R>): Promise<R> => work();

  const CASES = [
    {
      name: 'a create only',
      steps: [
        ['Pause', 'PauseStep', 5],
        ['Lid', 'LidStep'],
        ['New', 'HepaStep'],
      ],
    },
    {
      name: 'a delete, an update and a create',
      steps: [
        ['Pause', 'PauseStep', 7],
        ['New', 'HepaStep'],
      ],
    },
  ] as const;

  for (const c of CASES) {
    it(`${c.name}: the later apply fails, never both "applied" unless the protocol is the plan's target`, async function () {
      const a = make();
      const b = make();
      const pid = sim.addProtocol(c.name);
      await a.prep.createStep(pid, { stepType: 'PauseStep', name: 'Pause', duration: 5 });
      await a.prep.createStep(pid, { stepType: 'LidStep', name: 'Lid' });
      const desired = readDesired(
        { steps: c.steps.map(([name, stepType, duration]) => ({ name, stepType, ...(duration ? { duration } : {}) })) },
        'plan',
      );
      const read = await readProtocol(a.runs, pid, 'plan');
      const { plan } = planned(read.export, desired, { protocolId: pid, instrument: a.baseUrl });
      await b.runs.status(); // both logged in: the two applies read the protocol at the same moment
      sim.setFaults({ latencyMs: 200 });
      const apply = (client: typeof a): Promise<string | Error> =>
        applyPlan({ prep: client.prep, runs: client.runs, audited }, plan, 'apply').then(
          (r) => r.outcome,
          (e: Error) => e,
        );
      const first = apply(a);
      resetHomes(); // the second Node-RED: a home of its own, so its apply does not wait for the first
      const outcomes = await Promise.all([first, apply(b)]);
      sim.setFaults({});
      const after = await readProtocol(a.runs, pid, 'plan');
      const failed = outcomes.filter((o): o is Error => o instanceof Error);
      if (after.digest !== plan.target) {
        assert.ok(failed.length >= 1, `the protocol is not the target, yet both applied: ${String(outcomes)}`);
        for (const e of failed) assert.match(e.message, /read back differs from the plan's target|delete-step failed: 404/);
        assert.throws(() => requireUniqueNames(after, 'plan'), /more than one step named "New"/);
      }
    });
  }
});
