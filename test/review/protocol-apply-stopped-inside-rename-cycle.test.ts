/**
 * Review finding: an apply refused midway says "a new plan from the protocol as it is now completes it". Not when it
 * stopped inside a cycle of renames (a swap: "A" → "B" is written while the other step still holds "B", as the
 * README describes): two steps then share a name, and plan refuses such a protocol ("rename one of them with lh-steps")
 * without saying which step is which, so the user could not tell which of the two to rename, nor to what. The error
 * now says so, naming both steps by id and the rename that lets a new plan complete the apply (to the name the plan
 * was to give that step when no step has it). Model-based (seeded PRNG, the seed printed; LH_SEED=<n> replays it):
 * protocols with a cycle of 2 to 5 renames, an apply refused at each of its writes; whenever the stop leaves two
 * steps of one name the error says which, and following it, a new plan completes the apply (keeping every step's
 * instrument id when it named the step's own name); a second plan is empty.
 */
import assert from 'node:assert/strict';

import { applyPlan, ApplyStopped, readProtocol, requireUniqueNames } from '../../src/nodes/lh-protocol/apply-plan';
import { asExportStep, duplicateNames, exportText, readDesired } from '../../src/nodes/lh-protocol/export-format';
import { type Plan } from '../../src/nodes/lh-protocol/plan';
import { writeCount } from '../../src/nodes/lh-protocol/plan-make';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';
import { planned } from '../support/protocol-plan';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const SHARED =
  /Steps (\d+) and (\d+) both have the name ("[^"]*") now .* first rename step (\d+) to (?:("[^"]*")|a name no step)/;

describe('review: lh-protocol apply stopped inside a cycle of renames', function () {
  this.timeout(120_000);
  const { sim, make } = useClients();
  const audited = <R>(_why: unknown, work: () => Promise<R>): Promise<R> => work();

  it('says which steps share a name and what to rename; then a new plan completes the apply', async function () {
    console.log(`      protocol-rename-cycle seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    const client = make();
    const deps = { prep: client.prep, runs: client.runs, audited };
    const planOf = async (pid: number, given: unknown): Promise<Plan> => {
      const read = await readProtocol(client.runs, pid, 'plan');
      requireUniqueNames(read, 'plan');
      return planned(read.export, readDesired(given, 'plan'), { protocolId: pid, instrument: client.baseUrl }).plan;
    };
    let shared = 0;
    for (let n = 0; n < 12; n++) {
      const size = rng.int(2, 6);
      const cycle = Array.from({ length: size }, (_, i) => i)
        .filter(() => rng.chance(0.7))
        .slice(0, 5);
      if (cycle.length < 2) cycle.splice(0, cycle.length, 0, 1);
      const names = Array.from({ length: size }, (_, i) => `S${i}`);
      const given = {
        steps: names.map((name, i) => {
          const at = cycle.indexOf(i);
          const step = { name, stepType: 'PauseStep', duration: i, disabled: rng.chance(0.2) };
          return at < 0 ? step : { ...step, name: names[cycle[(at + 1) % cycle.length]], renamedFrom: name };
        }),
      };
      const first = await (async () => {
        const pid = sim.addProtocol(`Case ${n}`);
        for (const [i, name] of names.entries()) await client.prep.createStep(pid, { stepType: 'PauseStep', name, duration: i });
        return { pid, plan: await planOf(pid, given) };
      })();
      const writes = writeCount(first.plan.changes);
      for (let stopAt = 1; stopAt < writes; stopAt++) {
        const pid = sim.addProtocol(`Case ${n} stop ${stopAt}`);
        for (const [i, name] of names.entries()) await client.prep.createStep(pid, { stepType: 'PauseStep', name, duration: i });
        const ids = new Map((await readProtocol(client.runs, pid, 'ids')).steps.map((s) => [s.step.name, s.id]));
        const plan = await planOf(pid, given);
        let seen = 0;
        const stop = sim.onRequest((r) => {
          if (r.method !== 'GET' && r.path.startsWith(`/api/v1/protocols/${pid}/`) && seen++ === stopAt)
            sim.runs.create({ protocolId: pid }, 'operator');
        });
        const err = await applyPlan(deps, plan, 'apply').then(
          () => undefined,
          (e: unknown) => e,
        );
        stop();
        sim.runs.reset();
        assert.ok(err instanceof ApplyStopped, `case ${n} stop ${stopAt}: ${String(err)}`);
        const now = await readProtocol(client.runs, pid, 'check');
        const dup = duplicateNames(now.export.steps);
        const said = SHARED.exec(err.message);
        const where = `case ${n} (seed ${SEED}) stopped at write ${stopAt}: ${err.message}`;
        assert.equal(dup.length > 0, said !== null, `two steps of one name (${dup.join(', ')}) iff the error says so: ${where}`);
        assert.doesNotMatch(err.message, /\.\. /, 'one full stop after the cause');
        let keepsIds = true;
        if (said) {
          shared++;
          assert.equal(said[3], JSON.stringify(dup[0]), where);
          const holders = now.steps.filter((s) => s.step.name === dup[0]).map((s) => String(s.id));
          assert.deepEqual([said[1], said[2]].sort(), holders.sort(), where);
          keepsIds = said[5] !== undefined;
          await client.prep.renameStep(pid, Number(said[4]), said[5] ? (JSON.parse(said[5]) as string) : 'Aside');
        } else {
          assert.match(err.message, /A new plan from the protocol as it is now completes it\.$/, where);
        }
        await applyPlan(deps, await planOf(pid, given), 'apply');
        const after = await readProtocol(client.runs, pid, 'check');
        assert.equal(
          exportText(after.export),
          exportText({ name: now.export.name, steps: readDesired(given, 'x').map(asExportStep) }),
          where,
        );
        assert.deepEqual((await planOf(pid, given)).changes, [], where);
        if (keepsIds) {
          for (const s of after.steps) {
            const d = given.steps.find((g) => g.name === s.step.name) as { renamedFrom?: string; name: string };
            assert.equal(s.id, ids.get(d.renamedFrom ?? d.name), `${where}: step "${s.step.name}" kept its id`);
          }
        }
      }
    }
    assert.ok(shared > 0, 'a stop inside a cycle was drawn');
  });
});
