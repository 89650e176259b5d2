import assert from 'node:assert/strict';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage, runtimeSettings } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

/**
 * A policy default whose answer is in flight when the flow is redeployed, or while another answer is in flight,
 * must not vanish: it is answered once, or escalated, never silently dropped.
 */
describe('error policy: defaults in flight', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const runtimePuts = (): Msg[] =>
    sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime') as unknown as Msg[];

  function flow(rule: Msg, timeout: number, store = ''): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = bServerFlow(sim, { withB: false, timeout });
    const onTab = (n: Msg): Msg => ({ ...n, z: 'tab' });
    return {
      credentials: server.credentials,
      nodes: [
        { id: 'tab', type: 'tab', label: 'policy' },
        ...server.nodes,
        onTab({
          id: 'policy',
          type: 'lh-error-policy',
          server: 'server',
          rules: [rule],
          store,
          wires: [['notify'], ['auto'], ['escalate']],
        }),
        onTab({ id: 'notify', type: 'helper' }),
        onTab({ id: 'auto', type: 'helper' }),
        onTab({ id: 'escalate', type: 'helper' }),
        onTab({ id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] }),
        onTab({ id: 'caught', type: 'helper' }),
      ],
    };
  }

  const clientOf = (): { prep: { pendingErrors(): Promise<unknown>; answerRuntimeError(body: unknown): Promise<unknown> } } =>
    (helper.getNode('server') as unknown as { client: never }).client;

  it('a semi-automatic default in flight during a full redeploy is sent again by the new instance and answered once', async function () {
    const f = flow(
      { source: 'any', minSeverity: '', pattern: '', code: '', mode: 'semi-automatic', answer: 'Retry', delay: 1 },
      2000,
    );
    await loadWithPage(f.nodes, f.credentials);
    const error = sim.injectPendingError({ title: 'Clot' }) as unknown as Msg;
    const notified = nextMessage(helper.getNode('notify'));
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    await notified;
    await clientOf().prep.pendingErrors(); // logged in before the fault
    sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 60000, methods: ['PUT'] });
    await until(() => runtimePuts().length > 0, 'the default to be sent');

    await helper.setFlows(f.nodes as never, 'full', f.credentials as never); // its PUT never gets an answer
    sim.clearFaults();
    const autos = collect(helper.getNode('auto'));
    const escalations = collect(helper.getNode('escalate'));
    await until(() => autos.length + escalations.length > 0, 'the default to be answered or escalated', 15000);

    assert.equal(escalations.length, 0);
    assert.equal(autos[0].outcome, 'answered');
    assert.ok(!sim.state.pendingErrors.some((e) => e.id === error.id), 'the error is still pending');
    const applied = runtimePuts().filter((r) => r.status === 200 || r.status === 204);
    assert.equal(applied.length, 1, 'exactly one answer applied');
  });

  it('walk-away waits for another answer in flight, and answers when that one is refused', async function () {
    const f = flow({ source: 'any', minSeverity: '', pattern: '', code: '', mode: 'walk-away', answer: 'Retry', delay: 0 }, 5000);
    await loadWithPage(f.nodes, f.credentials);
    const client = clientOf();
    await client.prep.pendingErrors();
    const error = sim.injectPendingError({ title: 'Clot' }) as unknown as Msg;
    sim.setFaults({ latencyMs: 500 });
    const other = client.prep
      .answerRuntimeError({
        id: error.id,
        groupId: error.groupId,
        selectedResponse: 'NotOffered',
        errorData: [{ id: error.id, selectedResponse: 'NotOffered' }],
      })
      .then(
        () => 'answered',
        (e: Error) => e.message,
      );
    await until(() => runtimePuts().length > 0, 'the other answer to be in flight');
    const autos = collect(helper.getNode('auto'));
    const caught = collect(helper.getNode('caught'));
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    assert.notEqual(await other, 'answered');
    sim.clearFaults();
    await until(() => autos.length + caught.length > 0, 'an answer or a report from the policy', 8000);
    assert.equal(caught.length, 0, `reported to Catch: ${JSON.stringify(caught[0]?.error)}`);
    assert.equal(autos[0].outcome, 'answered');
    assert.equal(sim.state.pendingErrors.length, 0);
  });

  it('a default in flight when Node-RED stops is kept in the context store and sent once after the restart', async function () {
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    try {
      const f = flow(
        { source: 'any', minSeverity: '', pattern: '', code: '', mode: 'semi-automatic', answer: 'Retry', delay: 1 },
        2000,
        'keep',
      );
      await loadWithPage(f.nodes, f.credentials);
      await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
      await helper.setFlows(f.nodes as never, 'full', f.credentials as never);
      const error = sim.injectPendingError({ title: 'Clot' }) as unknown as Msg;
      const notified = nextMessage(helper.getNode('notify'));
      helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
      await notified;
      await clientOf().prep.pendingErrors();
      sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 60000, methods: ['PUT'] });
      await until(() => runtimePuts().length > 0, 'the default to be sent');
      await new Promise((r) => setImmediate(r)); // the in-flight mark is written

      // a crash: the module state (pending books, answer ledger) is gone, the context store keeps what was written
      restartMemory();
      sim.clearFaults();
      await helper.setFlows(f.nodes as never, 'full', f.credentials as never);
      const autos = collect(helper.getNode('auto'));
      const escalations = collect(helper.getNode('escalate'));
      await until(() => autos.length + escalations.length > 0, 'the default to be answered or escalated', 10000);
      assert.equal(escalations.length, 0);
      assert.equal(autos[0].outcome, 'answered');
      assert.ok(!sim.state.pendingErrors.some((e) => e.id === error.id));
    } finally {
      runtimeSettings({ contextStorage: undefined });
    }
  });
});
