import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;
type Clock = ReturnType<typeof FakeTimers.install>;

/** An answer given by a flow (lh-answer-error, lh-submit-recovery) cancels the policy's pending default at once. */
describe("a flow's answer and the error policy", function () {
  this.timeout(20000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  async function load(answerNode: Msg, rule: Msg, withB: boolean): Promise<void> {
    const server = withB ? bServerFlow(sim) : bServerFlow(sim, { withB: false });
    const onTab = (n: Msg): Msg => ({ ...n, z: 'tab' });
    await loadWithPage(
      [
        { id: 'tab', type: 'tab', label: 'flow answer' },
        ...server.nodes,
        onTab({
          id: 'policy',
          type: 'lh-error-policy',
          server: 'server',
          rules: [rule],
          store: '',
          wires: [['notify'], ['auto'], ['escalate']],
        }),
        onTab({ id: 'notify', type: 'helper' }),
        onTab({ id: 'auto', type: 'helper' }),
        onTab({ id: 'escalate', type: 'helper' }),
        onTab({ ...answerNode, id: 'answer', server: 'server', wires: [['answered']] }),
        onTab({ id: 'answered', type: 'helper' }),
        onTab({ id: 'catcher', type: 'catch', scope: ['policy', 'answer'], wires: [['caught']] }),
        onTab({ id: 'caught', type: 'helper' }),
      ],
      server.credentials,
    );
  }

  /** The policy's status texts from now on. */
  function statusTexts(): string[] {
    const texts: string[] = [];
    helper.getNode('policy').on('call:status', (call: { args: Msg[] }) => texts.push(String(call.args[0]?.text ?? '')));
    return texts;
  }

  async function raise(record: Msg, source: 'A' | 'B'): Promise<void> {
    const notified = nextMessage(helper.getNode('notify'));
    helper.getNode('policy').receive({ payload: record, source, event: 'raised' });
    await notified;
  }

  const semi = (answer: string, source: string): Msg => ({
    source,
    minSeverity: '',
    pattern: '',
    code: '',
    mode: 'semi-automatic',
    answer,
    delay: 60,
  });

  it('lh-answer-error: the pending default is cancelled when the flow answers, and never goes out', async function () {
    await load({ type: 'lh-answer-error' }, semi('Retry', 'A'), false);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const error = sim.injectPendingError() as unknown as Msg;
    await raise(error, 'A');
    const texts = statusTexts();
    const auto = collect(helper.getNode('auto'));
    const caught = collect(helper.getNode('caught'));
    const answered = nextMessage(helper.getNode('answered'));
    helper.getNode('answer').receive({ payload: error, selectedResponse: 'Abort' });
    assert.equal((await answered).outcome, 'answered');
    assert.match(texts[texts.length - 1] ?? '', /no default pending|status\.idle/, `policy status: ${JSON.stringify(texts)}`);

    await clock.tickAsync(120_000);
    const puts = sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime');
    assert.deepEqual(
      puts.map((r) => (r.body as Msg).selectedResponse),
      ['Abort'],
    );
    assert.equal(auto.length, 0);
    assert.equal(caught.length, 0, `caught: ${JSON.stringify(caught.map((m) => m.error))}`);
  });

  it('lh-submit-recovery: the pending default is cancelled when the flow submits, and never goes out', async function () {
    await load({ type: 'lh-submit-recovery', kind: 'recovery' }, semi('', 'B'), true);
    sim.state.handlers.add('nodered1');
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const error = sim.injectInstrumentError() as unknown as Msg;
    await raise(error, 'B');
    const texts = statusTexts();
    const auto = collect(helper.getNode('auto'));
    const caught = collect(helper.getNode('caught'));
    const answered = nextMessage(helper.getNode('answered'));
    // action 2 declares a required input (the aspiration height): the flow gives it
    helper.getNode('answer').receive({ payload: error, selectedActionId: 2, inputs: [{ id: 1, value: '2.5' }] });
    assert.equal((await answered).outcome, 'answered');
    assert.match(texts[texts.length - 1] ?? '', /no default pending|status\.idle/, `policy status: ${JSON.stringify(texts)}`);

    await clock.tickAsync(120_000);
    const submissions = sim.requests.filter(
      (r) => r.api === 'B' && r.method === 'POST' && r.path.includes('/instrument-errors/'),
    );
    assert.equal(submissions.length, 1);
    assert.equal((submissions[0].body as Msg).selectedActionId, 2);
    assert.equal(auto.length, 0);
    assert.equal(caught.length, 0, `caught: ${JSON.stringify(caught.map((m) => m.error))}`);
  });
});
