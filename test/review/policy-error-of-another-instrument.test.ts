/**
 * review63: two instruments' error polls wired into one error policy (as README allows for their run watches). The
 * policy answered the other instrument's error through its own lh-server: a walk-away Retry went to this instrument
 * under the other's error id (where the id may name another error), the other instrument's error reached nobody (the
 * answer found no such error here: logged at debug level only), and it took a step of this instrument's ladder. Now an
 * error whose msg names another instrument is notified (output 1, `msg.policy.otherInstrument`), never answered,
 * counted or cancelled here, and the log says once per instrument how to wire it.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: an error policy fed the errors of another instrument', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const other = new Simulator({});
  before(async () => other.start());
  after(async () => other.stop());
  afterEach(() => other.reset());

  async function load(rules: Msg[]): Promise<Record<'notify' | 'auto' | 'escalate' | 'caught', Msg[]>> {
    const one = serverFlow(sim, { withB: false });
    const two = serverFlow(other, { id: 'server2', withB: false });
    const poll = (id: string, server: string): Msg => ({
      id,
      type: 'lh-error-poll',
      server,
      source: 'A',
      interval: 0.5,
      wires: [['policy'], ['policy'], []],
    });
    const nodes: Msg[] = [
      ...one.nodes,
      ...two.nodes,
      poll('poll1', 'server'),
      poll('poll2', 'server2'),
      { id: 'policy', type: 'lh-error-policy', server: 'server', rules, wires: [['notify'], ['auto'], ['escalate']] },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ];
    await loadFlow(nodes, { ...one.credentials, ...two.credentials });
    return {
      notify: collect(helper.getNode('notify')),
      auto: collect(helper.getNode('auto')),
      escalate: collect(helper.getNode('escalate')),
      caught: collect(helper.getNode('caught')),
    };
  }

  it("notifies the other instrument's error, answers it nowhere and leaves this instrument's ladder at step 1", async function () {
    // a ladder: the 1st error of a run is retried at once, the 2nd goes to a person
    const ladder = {
      id: 'clot',
      source: 'A',
      pattern: 'Clot',
      steps: [{ mode: 'walk-away', answer: 'Retry' }, { mode: 'manual' }],
    };
    const out = await load([ladder]);
    const theirs = other.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    await until(
      () => out.notify.length + out.auto.length + out.escalate.length + answersSent(sim).length > 0,
      'the policy',
      10000,
    );
    await until(() => out.notify.length > 0, "the other instrument's error notified", 3000);
    assert.equal(out.notify.length, 1);
    assert.equal((out.notify[0].payload as Msg).id, theirs.id);
    assert.deepEqual(out.notify[0].policy, { mode: 'manual', rule: null, otherInstrument: other.baseUrl });
    assert.deepEqual(answersSent(sim), [], 'nothing is sent to this instrument for the other one');
    assert.deepEqual(answersSent(other), []);

    // this instrument's first Clot error of the hour is its ladder's first: retried at once
    const mine = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    await until(() => out.auto.length + out.escalate.length > 0, "this instrument's error decided", 10000);
    assert.equal(out.escalate.length, 0, JSON.stringify(out.escalate.map((m) => m.reason)));
    assert.deepEqual(
      answersSent(sim).map((b) => [b.id, b.selectedResponse]),
      [[mine.id, 'Retry']],
    );
    assert.deepEqual(out.caught, []);
  });
});
