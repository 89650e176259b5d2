/**
 * Protocols as code over real HTTP against the simulator: random current and desired protocols (2–12 steps, every
 * step type; renames in chains and cycles, deletes, creates, field changes, enable/disable, reorders) → plan + apply
 * reaches the desired protocol exactly, a second plan is empty, and the writes the simulator saw never exceed
 * created + deleted + renamed + updated + enabled/disabled + (kept steps − their longest run in order) + 1 (one
 * reorder call). An apply stopped at any of its writes (a run of the protocol started meanwhile: the simulator
 * refuses the write) reports the changes applied (the writes before it) and not applied, and a new plan completes it.
 * The seed is printed (LH_SEED=<n> replays it); LH_PROTOCOL_RUNS sets the number of protocols of each (25).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { STEP_TYPES } from '../../src/contract/instrument-contract';
import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { type Change, planChanges, writeCount } from '../../src/nodes/lh-protocol/plan-make';
import { useClients } from '../support/client-suite';
import { planned } from '../support/protocol-plan';
import { currentAndDesired, keptInCurrentOrder, lisLength, ODD_NAMES, stepOf } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const RUNS = process.env.LH_PROTOCOL_RUNS ? Number(process.env.LH_PROTOCOL_RUNS) : 25;

describe('lh-protocol plan + apply against the simulator (property, real HTTP)', function () {
  this.timeout(120_000); // a loaded machine; the default run takes a few seconds
  const { sim, make } = useClients();

  for (const [names, pool] of [
    ['', undefined],
    [', names apart only by letter case, Unicode form, whitespace, 200 characters', ODD_NAMES],
  ] as const) {
    it(`reaches the desired protocol exactly, a second plan is empty, writes within the bound${names}`, async function () {
      console.log(`      protocol-apply seed: ${SEED}, ${RUNS} protocols (LH_SEED=${SEED} replays it)`);
      const client = make();
      const typesSeen = new Set<string>();
      await fc.assert(
        fc.asyncProperty(currentAndDesired(2, 12, pool), async ({ current, desired: given }) => {
          const pid = sim.addProtocol('Generated');
          for (const spec of current) await client.prep.createStep(pid, stepOf(spec));
          for (const s of [...current, ...given]) typesSeen.add(s.stepType);

          const desired = readDesired(JSON.parse(JSON.stringify({ steps: given })), 'plan');
          const before = await readProtocol(client.runs, pid, 'plan');
          const {
            changes,
            target,
            match,
            plan: made,
          } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
          const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply'); // as it travels in msg.plan
          const logged = sim.requests.length;
          const result = await applyPlan(
            { prep: client.prep, runs: client.runs, audited: (_why, work) => work() },
            plan,
            'apply',
          );
          const writes = sim.requests
            .slice(logged)
            .filter((r) => r.method !== 'GET' && r.path.startsWith(`/api/v1/protocols/${pid}/`));

          const after = await readProtocol(client.runs, pid, 'plan');
          assert.equal(exportText(after.export), exportText(target));
          if (changes.length > 0) assert.equal(result.outcome, 'applied');
          assert.deepEqual(planChanges(after.export, desired).changes, []);

          const kept = keptInCurrentOrder(match); // the kept steps' desired places, in their current order
          const minimalMoves = kept.length - lisLength(kept);
          const others = changes.filter((c) => c.action !== 'move').length;
          const bound = others + minimalMoves + (minimalMoves > 0 ? 1 : 0);
          assert.equal(writes.length, writeCount(changes));
          assert.ok(writes.length <= bound, `${writes.length} writes > bound ${bound}`);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      if (RUNS >= 25) assert.deepEqual([...typesSeen].sort(), [...STEP_TYPES].sort(), 'every step type was generated');
    });
    it(`an apply stopped at any write (a run started meanwhile) is completed by a new plan, which then is empty${names}`, async function () {
      const runs = RUNS;
      console.log(`      protocol-resume seed: ${SEED}, ${runs} protocols`);
      const client = make();
      const audited = <R>(_why: unknown, work: () => Promise<R>): Promise<R> => work();
      const planOf = async (pid: number, given: unknown): Promise<{ plan: ReturnType<typeof readPlan>; changes: Change[] }> => {
        const read = await readProtocol(client.runs, pid, 'plan');
        const desired = readDesired(JSON.parse(JSON.stringify({ steps: given })), 'plan');
        const { plan, changes } = planned(read.export, desired, { protocolId: pid, instrument: client.baseUrl });
        return { plan, changes };
      };
      await fc.assert(
        fc.asyncProperty(currentAndDesired(2, 12, pool), fc.nat(20), async ({ current, desired: given }, stopAt) => {
          const pid = sim.addProtocol('Generated');
          for (const spec of current) await client.prep.createStep(pid, stepOf(spec));
          const first = await planOf(pid, given);
          const total = writeCount(first.changes);
          let seen = 0;
          const stop = sim.onRequest((r) => {
            if (r.method === 'GET' || !r.path.startsWith(`/api/v1/protocols/${pid}/`) || seen++ !== stopAt) return;
            // an operator starts a run of it (the simulator refuses the write); a protocol that cannot run (no step
            // enabled) gets the refusal as a fault of this one request
            try {
              sim.runs.create({ protocolId: pid }, 'operator');
            } catch {
              sim.setFaults({ statusRate: 1, statusCode: 409 });
            }
          });
          try {
            await applyPlan({ prep: client.prep, runs: client.runs, audited }, first.plan, 'apply');
            assert.ok(stopAt >= total, `the apply went on past the refused write ${stopAt} of ${total}`);
          } catch (err) {
            assert.ok(err instanceof ApplyStopped, String(err));
            assert.ok(stopAt < total);
            assert.equal(writeCount(err.applied), stopAt, 'the changes applied are the writes before the refused one');
            assert.deepEqual([...err.applied, ...err.notApplied], first.changes);
          } finally {
            stop();
            sim.clearFaults();
            sim.runs.reset();
          }
          const second = await planOf(pid, given);
          await applyPlan({ prep: client.prep, runs: client.runs, audited }, second.plan, 'apply');
          const third = await planOf(pid, given);
          assert.deepEqual(third.changes, []);
          const after = await readProtocol(client.runs, pid, 'plan');
          assert.deepEqual(
            after.export.steps.map((s) => s.name),
            (given as { name: string }[]).map((d) => d.name),
          );
        }),
        { seed: SEED, numRuns: runs },
      );
    });
  }
});
