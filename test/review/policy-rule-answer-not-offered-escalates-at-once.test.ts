/**
 * review63: a semi-automatic rule whose answer the error does not offer (a response the A error does not list, an
 * action id the B error does not list). The policy notified "unless someone answers by …, the policy answers: Skip"
 * and scheduled a default that could never go out: it was refused (nothing sent) only when it fell due, and escalated
 * then. A person who trusted the notification waited the whole delay; on a B error with its own timeoutSeconds the
 * default fell due one second before the instrument acts itself, so the escalation left a person one second. Now the
 * decision escalates at once (output 3, naming what the error offers), and nothing is scheduled or sent.
 */
import assert from 'node:assert/strict';

import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: an error policy rule answering what the error does not offer', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  async function load(rules: Msg[]): Promise<Record<'notify' | 'auto' | 'escalate', Msg[]>> {
    const server = bServerFlow(sim);
    const nodes: Msg[] = [
      ...server.nodes,
      { id: 'policy', type: 'lh-error-policy', server: 'server', rules, wires: [['notify'], ['auto'], ['escalate']] },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
    ];
    await loadFlow(nodes, server.credentials);
    return {
      notify: collect(helper.getNode('notify')),
      auto: collect(helper.getNode('auto')),
      escalate: collect(helper.getNode('escalate')),
    };
  }

  it('A: a semi-automatic step naming a response the error (or an item) does not list escalates at once', async function () {
    const rules = [
      { id: 'skip', source: 'A', pattern: 'Clot', steps: [{ mode: 'semi-automatic', answer: 'Skip', delay: 600 }] },
      { id: 'retry', source: 'A', pattern: 'Door', steps: [{ mode: 'semi-automatic', answer: 'Retry', delay: 600 }] },
    ];
    const out = await load(rules);
    const clot = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    helper.getNode('policy').receive({ payload: structuredClone(clot), source: 'A', event: 'raised' });
    // the main answer offers Retry, the item only Abort: Retry cannot be sent as the answer of every item
    const door = sim.injectPendingError({
      title: 'Door open',
      severity: 'Error',
      responses: ['Retry', 'Abort'],
      errorData: [{ id: 'ch1', responses: ['Abort'] }],
    });
    helper.getNode('policy').receive({ payload: structuredClone(door), source: 'A', event: 'raised' });
    await until(() => out.escalate.length >= 2, 'two escalations', 3000);
    assert.deepEqual(
      out.escalate.map((m) => [(m.payload as Msg).id, m.outcome]),
      [
        [clot.id, 'escalated'],
        [door.id, 'escalated'],
      ],
    );
    assert.match(String(out.escalate[0].reason), /answers Skip, which the error does not offer \(it offers Retry, Abort\)/);
    assert.match(String(out.escalate[1].reason), /item ch1 of the error does not offer \(it offers Abort\)/);
    assert.ok(
      out.notify.every((m) => m.deadline === undefined),
      'no notification promises an answer by a deadline',
    );
    assert.deepEqual(answersSent(sim), []);
  });

  it("B: an action id the error does not list escalates at once, not a second before the instrument's timeout", async function () {
    const rules = [{ id: 'seven', source: 'B', steps: [{ mode: 'semi-automatic', answer: '7', delay: 120 }] }];
    const out = await load(rules);
    const e = sim.injectInstrumentError({ title: 'Clot', timeoutSeconds: 30 });
    helper.getNode('policy').receive({ payload: structuredClone(e), source: 'B', event: 'raised' });
    await until(() => out.escalate.length >= 1, 'the escalation', 3000);
    assert.equal(out.escalate.length, 1);
    assert.equal(out.escalate[0].outcome, 'escalated');
    assert.match(String(out.escalate[0].reason), /answers 7, which the error does not offer \(it offers 1 /);
    assert.equal(out.notify[0].deadline, undefined);
    assert.deepEqual(recoverySubmissions(sim), []);
    assert.deepEqual(out.auto, []);
  });

  // review69: the rule's action id is checked as a number (as answerB sends it): "01" is action 1, which the error offers
  it('B: an action id written with a leading zero is the action the error offers: scheduled and sent', async function () {
    const rules = [{ id: 'one', source: 'B', steps: [{ mode: 'semi-automatic', answer: '01', delay: 1 }] }];
    const out = await load(rules);
    sim.state.handlers.add('nodered1'); // the lh-server's client key, registered as the error handler
    const e = sim.injectInstrumentError({ title: 'Clot' });
    helper.getNode('policy').receive({ payload: structuredClone(e), source: 'B', event: 'raised' });
    await until(() => out.auto.length + out.escalate.length >= 1, 'the default', 8000);
    assert.deepEqual(out.escalate, []);
    assert.equal(typeof out.notify[0]?.deadline, 'string', 'notified with the deadline of the default');
    assert.equal(out.auto.length, 1);
    assert.equal(out.auto[0].outcome, 'answered');
    assert.deepEqual(
      recoverySubmissions(sim).map((r) => (r.body as Msg).selectedActionId),
      [1],
    );
  });
});
