/**
 * review43: an error policy whose instrument's A URL is spelled otherwise than another lh-server node's (or than its
 * own was before a redeploy). Every spelling (`http://127.0.0.1:port`, `HTTP://LOCALHOST:port/`) is one instrument:
 * one home, one answer ledger, one session. The policy kept three things by its lh-server's key as written:
 * - its pending defaults (a redeploy that respelled the URL left them in the book, counted, never sent);
 * - the answers that cancel a pending default "at once" (an answer through the other spelling cancelled nothing: the
 *   default stayed pending, shown in the status and kept in the context store, until error poll said resolved or
 *   its deadline found the answer in the ledger);
 * - the runs its ladders count in (a run watch on the other spelling was taken for another instrument: the next run
 *   did not start at step 1).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage, runtimeSettings, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type Clock = ReturnType<typeof FakeTimers.install>;

/** Lets real I/O run (setTimeout is faked here) until `check` holds, at most `ms` of real time; never fails itself. */
async function settled(check: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setImmediate(r));
}

/** The same instrument's A URL as another person types it: scheme and host in capitals, localhost, a trailing slash. */
function otherSpelling(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `HTTP://LOCALHOST:${u.port}${u.pathname.replace(/\/+$/, '')}/`;
}

describe('review: an error policy and an instrument URL spelled two ways', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    runtimeSettings({ contextStorage: undefined });
  });

  const puts = (): Msg[] => answersSent<Msg>(sim);
  const semi = (delay: number): Msg => ({
    id: 'semi',
    source: 'A',
    minSeverity: '',
    pattern: '',
    code: '',
    steps: [{ mode: 'semi-automatic', answer: 'Retry', delay }],
  });

  function flow(
    policyServer: 'server' | 'server2',
    rules: Msg[],
    store = '',
  ): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const first = serverFlow(sim, { withB: false });
    const second = serverFlow(sim, { id: 'server2', withB: false, config: { baseUrl: otherSpelling(sim.baseUrl) } });
    const nodes: Msg[] = [
      ...first.nodes,
      ...second.nodes,
      { id: 'policy', type: 'lh-error-policy', server: policyServer, rules, store, wires: [['notify'], ['auto'], ['escalate']] },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
      { id: 'answer', type: 'lh-answer-error', server: 'server2', selectedResponse: '', wires: [['answered']] },
      { id: 'answered', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ];
    return { nodes, credentials: { ...first.credentials, ...second.credentials } };
  }

  /** The policy's status texts from now on. */
  function statusTexts(): string[] {
    const texts: string[] = [];
    helper.getNode('policy').on('call:status', (call: { args: Msg[] }) => texts.push(String(call.args[0]?.text ?? '')));
    return texts;
  }

  async function raise(error: Msg): Promise<Msg> {
    const notified = nextMessage(helper.getNode('notify'));
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    return notified;
  }

  it('a pending default still goes out, once, after a redeploy that respelled the lh-server URL', async function () {
    const before = flow('server', [semi(60)]);
    await loadWithPage(before.nodes, before.credentials);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    assert.equal(((await raise(error)).policy as Msg).mode, 'semi-automatic');
    await clock.tickAsync(10_000);

    // the lab edits the lh-server node: the same instrument, its URL typed another way
    const respelled = flow('server', [semi(60)]);
    (respelled.nodes[0] as Msg).baseUrl = otherSpelling(sim.baseUrl);
    await helper.setFlows(respelled.nodes, 'full', respelled.credentials);
    const auto = collect(helper.getNode('auto'));
    await clock.tickAsync(60_000);
    await settled(() => auto.length > 0);
    await clock.tickAsync(60_000);
    assert.deepEqual(
      puts().map((p) => p.selectedResponse),
      ['Retry'],
      'the default went out once',
    );
    assert.equal(auto.length, 1);
    assert.equal((auto[0].payload as Msg).outcome, 'answered');
  });

  it('an answer through the other spelling cancels the pending default at once, and a restart does not send it', async function () {
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    const f = flow('server', [semi(60)], 'keep');
    await loadWithPage(f.nodes, f.credentials);
    await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
    await helper.setFlows(f.nodes, 'full', f.credentials);
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    await raise(error);
    const texts = statusTexts();

    // a person's reply, through an answer node on the lh-server spelled the other way
    const answered = nextMessage(helper.getNode('answered'));
    helper.getNode('answer').receive({ payload: error, selectedResponse: 'Abort' });
    assert.equal((await answered).outcome, 'answered');
    // cancelled at once (README: "cancels every policy's pending default for that error at once")
    assert.match(texts[texts.length - 1] ?? '', /no default pending|status\.idle/, `policy status: ${JSON.stringify(texts)}`);

    // a restart of Node-RED before error poll said resolved: the context store must not hold the default any more
    restartMemory();
    await helper.setFlows(f.nodes, 'full', f.credentials);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const caught = collect(helper.getNode('caught'));
    await clock.tickAsync(120_000);
    clock.uninstall();
    clock = undefined;
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      puts().map((p) => p.selectedResponse),
      ['Abort'],
      "only the person's answer reached the instrument",
    );
    assert.equal(caught.length, 0);
  });

  it('a run watched through the other spelling is this instrument’s run: its ladder starts at step 1 again', async function () {
    const ladder: Msg = {
      id: 'ladder',
      source: 'A',
      minSeverity: '',
      pattern: '',
      code: '',
      steps: [
        { mode: 'walk-away', answer: 'Retry', delay: 0 },
        { mode: 'manual', answer: '', delay: 0 },
      ],
    };
    const f = flow('server', [ladder]);
    await loadWithPage(f.nodes, f.credentials);
    const auto = collect(helper.getNode('auto'));
    const escalated = collect(helper.getNode('escalate'));
    const first = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    helper.getNode('policy').receive({ payload: first, source: 'A', event: 'raised' });
    await until(() => auto.length === 1, 'step 1 answered');

    // lh-run-watch on the other lh-server node names the instrument by its public URL (as that node spells it)
    const client = (helper.getNode('server2') as unknown as { client: { baseUrl: string } }).client;
    const u = new URL(client.baseUrl);
    const instrument = { name: 'sim', baseUrl: `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, ''), instrumentUrl: '' };
    helper.getNode('policy').receive({
      topic: 'state',
      state: 'Running',
      payload: { protocolRunState: 'Running', protocolId: 7, protocolName: 'P7', startTime: new Date().toISOString() },
      instrument,
    });
    const second = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    helper.getNode('policy').receive({ payload: second, source: 'A', event: 'raised' });
    await until(() => auto.length + escalated.length === 2, 'the decision on the second error');
    assert.equal(escalated.length, 0, 'the new run started the ladder again: step 1, not the manual step 2');
    assert.equal((auto[1].payload as Msg).step, 1);
    assert.deepEqual(
      puts().map((p) => p.id),
      [first.id, second.id],
    );
  });
});
