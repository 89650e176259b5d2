/**
 * lh-protocol in a real Node-RED runtime against the simulator: export, plan, apply, validate; the refusals (changed
 * since the plan, a run in progress, bad input, a plan for another instrument or protocol) with no write at the
 * simulator; an apply stopped by a refused write and completed by a new plan; every write of an apply in the audit
 * trail under the plan's id and base.
 */
import assert from 'node:assert/strict';

import { LoggedRequest } from '../../src/simulator';
import { useAuditDir } from '../audit/chain-support';
import { configuredNode, useInstrument } from '../support/node-suite';
import { helper, runtimeSettings } from '../support/runtime';

type Msg = Record<string, unknown>;
interface Plan {
  id: string;
  protocolId: number;
  base: string;
  target: string;
  changes: { action: string; name: string }[];
  summary: string[];
}

describe('lh-protocol', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });
  const fromMsg = { operation: 'msg', protocolId: '' };

  /** Requests that change the instrument (not the login). */
  const writes = (): LoggedRequest[] =>
    sim.requests.filter((r) => r.api === 'A' && r.method !== 'GET' && !r.path.startsWith('/api/v1/authenticate'));
  const requests = (): LoggedRequest[] => sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate'));

  /** The demo protocol's export, changed: the pause renamed and longer, the reagent disabled, a lid step first. */
  function edited(exported: { steps: Msg[] }): { steps: Msg[] } {
    const [pause, reagent, incubate] = exported.steps;
    return {
      steps: [
        { name: 'Close lid', stepType: 'LidStep', disabled: false, position: 'HeaterShaker1' },
        incubate,
        { ...pause, name: 'Pause for a look', renamedFrom: pause.name, duration: 45 },
        { ...reagent, disabled: true },
      ],
    };
  }

  it('exports a protocol as stable JSON: names, types and own fields in a fixed key order, no ids, byte-identical twice', async function () {
    const node = await load({ operation: 'export', protocolId: '1', protocolIdType: 'num' });
    const first = await node.run({ payload: 'go', topic: 'keep' });
    const second = await node.run({});
    assert.equal(JSON.stringify(first.payload, null, 2), JSON.stringify(second.payload, null, 2));
    const exported = first.payload as { name: string; steps: Msg[] };
    assert.equal(exported.name, 'Demo protocol');
    assert.deepEqual(Object.keys(exported), ['name', 'steps']);
    assert.deepEqual(Object.keys(exported.steps[0]), [
      'name',
      'stepType',
      'disabled',
      'duration',
      'message',
      'pauseForSetDuration',
    ]);
    assert.ok(exported.steps.every((s) => !('id' in s) && !('stepOrder' in s)));
    assert.equal(first.topic, 'keep');
    assert.equal(first.protocolId, 1);
    assert.match(first.digest as string, /^sha256:[0-9a-f]{64}$/);
  });

  it('finds the protocol by msg.protocolName; an unknown name is an error naming what the instrument has', async function () {
    const node = await load(fromMsg);
    const msg = await node.run({ operation: 'export', protocolName: 'Demo protocol' });
    assert.equal(msg.protocolId, 1);
    const err = (await node.runFailing({ operation: 'export', protocolName: 'Nope' }))._error as Msg;
    assert.match(
      err.message as string,
      /"Nope" is not a protocol of the instrument; it has "Demo protocol" \(1\), "Empty protocol" \(2\)/,
    );
  });

  it('plans the changes, applies them with one write each (moves in one reorder call), reads back; a second plan is empty', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const before = requests().length;
    const planned = await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) });
    assert.equal(requests().length - before, 1, 'plan reads the protocol once and writes nothing');
    assert.equal(writes().length, 0);
    const plan = planned.plan as Plan;
    assert.deepEqual(planned.payload, plan);
    assert.deepEqual(plan.summary, [
      'rename "Pause for plate check" → "Pause for a look"',
      'update "Pause for a look": duration',
      'disable "Add buffer"',
      'create "Close lid" (LidStep) at 1',
      'move "Incubate" to 2',
    ]);

    const applied = await node.run({ operation: 'apply', plan });
    assert.equal(applied.outcome, 'applied');
    const protocol = (applied.payload as { protocol: { steps: Msg[] } }).protocol;
    assert.deepEqual(
      protocol.steps.map((s) => [s.name, s.disabled]),
      [
        ['Close lid', false],
        ['Incubate', false],
        ['Pause for a look', false],
        ['Add buffer', true],
      ],
    );
    assert.equal(protocol.steps[2].duration, 45);
    assert.deepEqual(
      writes().map((r) => `${r.method} ${r.path.replace('/api/v1/protocols/1/step', '')}`),
      ['PUT /rename/1', 'PUT ', 'PUT /disable/2', 'POST ', 'PUT /reorder-step'],
    );
    const again = await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) });
    assert.deepEqual((again.plan as Plan).changes, []);

    // an empty plan: unchanged, and nothing at all is sent
    const count = requests().length;
    const unchanged = await node.run({ operation: 'apply', plan: again.plan });
    assert.equal(unchanged.outcome, 'unchanged');
    assert.equal(requests().length, count);
  });

  it('refuses with LH_CHANGED, writing nothing, when the protocol changed on the instrument since the plan', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) })).plan as Plan;
    const step = sim.state.protocols.get(1)?.steps[1];
    assert.ok(step);
    step.name = 'Edited on the touchscreen';
    const failed = node.runFailing({ operation: 'apply', plan });
    const err = (await failed)._error as Msg;
    assert.match(err.message as string, /changed on the instrument since plan .* nothing was written; make a new plan/);
    assert.equal(err.kind, 'changed');
    assert.equal(writes().length, 0);
  });

  it('refuses with LH_BUSY, writing nothing, while a run of the protocol is in progress', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) })).plan as Plan;
    sim.runs.create({ protocolId: 1 }, 'operator');
    const caught = new Promise<Msg>((resolve) => helper.getNode('catcher').on('input', resolve));
    const err = await node.runFailing({ operation: 'apply', plan });
    assert.equal((err._error as Msg).kind, 'busy');
    // Node-RED 4 copies the error's code to the Catch node's msg.error (3.1 does not)
    if (process.env.LH_NODE_RED !== 'node-red-3') assert.equal(((await caught).error as Msg).code, 'LH_BUSY');
    assert.match((err._error as Msg).message as string, /not changed while a run of it is in progress/);
    assert.equal(writes().length, 0);
  });

  it('refuses bad input naming the step and the field before anything is sent', async function () {
    const bad = [
      [{ name: 'A', stepType: 'BakeStep' }, /payload\.steps\[0\] "A"\.stepType must be one of/],
      [
        { name: 'A', stepType: 'PauseStep', duration: 'long' },
        /payload\.steps\[0\] "A"\.duration must be a number for a PauseStep/,
      ],
    ] as const;
    const node = await load(fromMsg);
    const fails = async (msg: Msg): Promise<Msg> => (await node.runFailing(msg))._error as Msg;
    for (const [step, message] of bad) {
      const err = await fails({ operation: 'plan', protocolId: 1, payload: { steps: [step] } });
      assert.match(err.message as string, message);
    }
    const dup = await fails({
      operation: 'plan',
      protocolId: 1,
      payload: {
        steps: [
          { name: 'A', stepType: 'LidStep' },
          { name: 'A', stepType: 'LidStep' },
        ],
      },
    });
    assert.match(dup.message as string, /payload\.steps\[1\] "A"\.name repeats/);
    const noPlan = await fails({ operation: 'apply', plan: { id: 'x' } });
    assert.match(noPlan.message as string, /plan\.protocolId/);
    assert.equal(requests().length, 0);
  });

  it('refuses a plan made for another instrument or another protocol, and one altered after planning, writing nothing', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) })).plan as Plan;
    const other = (await node.runFailing({ operation: 'apply', plan: { ...plan, instrument: 'http://10.0.0.9/api' } }))
      ._error as Msg;
    assert.match(other.message as string, /plan\.instrument .* made for another instrument/);
    const otherProtocol = (await node.runFailing({ operation: 'apply', protocolId: 2, plan }))._error as Msg;
    assert.match(
      otherProtocol.message as string,
      /plan\.protocolId is 1: the plan was made for another protocol than the one given \(2\)/,
    );
    const altered = { ...plan, changes: plan.changes.filter((c) => c.action !== 'disable') };
    const tampered = (await node.runFailing({ operation: 'apply', plan: altered }))._error as Msg;
    assert.match(tampered.message as string, /do not lead to its target/);
    assert.equal(writes().length, 0);
  });

  it('stops at a refused write, says what was applied and what not, and a new plan from there completes it', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const desired = edited(exported);
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Plan;
    // an operator starts a run of the protocol on the touchscreen while the third write is on its way
    let seen = 0;
    const stop = sim.onRequest((r) => {
      if (r.method !== 'GET' && r.path.startsWith('/api/v1/protocols/1/step') && ++seen === 3)
        sim.runs.create({ protocolId: 1 }, 'operator');
    });
    const failed = await node.runFailing({ operation: 'apply', plan });
    stop();
    const err = failed._error as Msg;
    assert.match(
      err.message as string,
      /stopped at disable "Add buffer": .*Applied \(2\): rename .*; update .*\. Not applied \(3\): disable .*; create .*; move .*A new plan/,
    );
    assert.deepEqual(
      (failed.applied as Plan['changes']).map((c) => c.action),
      ['rename', 'update'],
    );
    assert.deepEqual(
      (failed.notApplied as Plan['changes']).map((c) => c.action),
      ['disable', 'create', 'move'],
    );
    assert.equal(writes().length, 3);
    sim.runs.reset(); // the run ends (back to Idle)
    const resumed = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Plan;
    assert.deepEqual(
      resumed.changes.map((c) => c.action),
      ['disable', 'create', 'move'],
    );
    const done = await node.run({ operation: 'apply', plan: resumed });
    assert.equal(done.outcome, 'applied');
    assert.deepEqual(((await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Plan).changes, []);
  });

  it('two applies of one plan at once: the first applies, the second is refused (LH_CHANGED), each write made once', async function () {
    const node = await load(fromMsg);
    const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) })).plan as Plan;
    const applied = new Promise<Msg>((resolve) => node.out.once('input', resolve));
    const refused = new Promise<Msg>((resolve) => node.caught.once('input', resolve));
    node.node.receive({ operation: 'apply', plan });
    node.node.receive({ operation: 'apply', plan });
    assert.equal((await applied).outcome, 'applied');
    assert.equal(((await refused)._error as Msg).kind, 'changed');
    assert.equal(writes().filter((r) => r.method === 'POST').length, 1);
    assert.equal(writes().length, 5);
  });

  it('refuses to plan a protocol whose steps share a name on the instrument, naming it, before any write', async function () {
    const node = await load(fromMsg);
    const step = sim.state.protocols.get(1)?.steps[2];
    assert.ok(step);
    step.name = 'Add buffer'; // as lh-steps may create it (duplicates are allowed without makeNameUnique)
    const err = (await node.runFailing({ operation: 'plan', protocolId: 1, payload: { steps: [] } }))._error as Msg;
    assert.match(err.message as string, /protocol 1 has more than one step named "Add buffer": steps are known by name/);
    assert.equal(writes().length, 0);
  });

  it('validates a protocol', async function () {
    const node = await load(fromMsg);
    const valid = await node.run({ operation: 'validate', protocolId: 1 });
    assert.deepEqual(valid.payload, { isValid: true, validationErrors: [] });
    const empty = await node.run({ operation: 'validate', protocolId: 2 });
    assert.deepEqual(empty.payload, { isValid: false, validationErrors: ['The protocol has no steps.'] });
  });

  describe('audit', function () {
    const audit = useAuditDir(runtimeSettings);

    it('records every write of an apply with the plan id and base as its why', async function () {
      const node = await load(fromMsg);
      const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
      const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: edited(exported) })).plan as Plan;
      await node.run({ operation: 'apply', plan });
      await helper.unload();
      const intents = audit.records().filter((r) => r.phase === 'intent');
      assert.equal(intents.length, 5);
      for (const r of intents) {
        const why = (r as unknown as { why: Msg }).why;
        assert.equal(why.plan, plan.id);
        assert.equal(why.base, plan.base);
        assert.equal(typeof why.change, 'string');
      }
    });
  });
});
