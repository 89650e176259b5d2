/**
 * Outcomes: a node reports success only for an answer the instrument applied because of it. Concurrent answers,
 * answers lost after the instrument applied them, and an operator answering on the instrument's screen between two
 * attempts must never produce a second "answered" or one with a response the instrument did not apply.
 */
import assert from 'node:assert/strict';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { homeOf, resetHomes } from '../../src/instrument';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, serverFlow, USER } from '../support/runtime';
import { LossyProxy, ProxiedRequest, ProxyDecision } from './lossy-proxy';

type Msg = Record<string, unknown>;

const isAnswer = (r: ProxiedRequest): boolean => r.method === 'PUT' && r.path.endsWith('/api/v1/errors/runtime');
/** A read of one error's record (not the list, `errors/check-for-pending-errors`, which a resend's check reads). */
const isReadBack = (r: ProxiedRequest): boolean =>
  r.method === 'GET' && /\/api\/v1\/errors\/[^/]+$/.test(r.path) && !r.path.endsWith('/check-for-pending-errors');

/** Waits until `count()` reaches `n`, checking on every message the given helper nodes receive. */
function until(nodes: string[], done: () => boolean, what: () => string, ms = 15000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what()}`)), ms);
    const check = (): void => {
      if (!done()) return;
      clearTimeout(timer);
      for (const id of nodes) helper.getNode(id).removeListener('input', check);
      resolve();
    };
    for (const id of nodes) helper.getNode(id).on('input', check);
    check();
  });
}

describe('answer outcomes', function () {
  this.timeout(30000);
  let proxy: LossyProxy;
  const sim = useInstrument({
    afterEach: async () => {
      await proxy.stop();
    },
  });

  beforeEach(async function () {
    proxy = new LossyProxy({ target: sim.baseUrl });
    await proxy.start();
  });

  /** Every second request of the answer traffic (answers and read-backs) loses its answer after the instrument processed it. */
  function loseEverySecondAnswer(): void {
    let n = 0;
    proxy.decide = (r): ProxyDecision => (isAnswer(r) || isReadBack(r) ? (n++ % 2 === 0 ? 'lose-after' : 'forward') : 'forward');
  }

  /** Two lh-server nodes on the same instrument (through the proxy), one lh-answer-error on each. */
  async function twoAnsweringNodes(): Promise<void> {
    const one = serverFlow(sim, { id: 's1', withB: false, config: { baseUrl: proxy.url } });
    const two = serverFlow(sim, { id: 's2', withB: false, config: { baseUrl: proxy.url } });
    await loadFlow(
      [
        ...one.nodes,
        ...two.nodes,
        { id: 'a1', type: 'lh-answer-error', server: 's1', wires: [['out']] },
        { id: 'a2', type: 'lh-answer-error', server: 's2', wires: [['out']] },
        { id: 'catcher', type: 'catch', scope: ['a1', 'a2'], wires: [['caught']] },
        { id: 'out', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      { ...one.credentials, ...two.credentials },
    );
  }

  it('50 concurrent answers from two nodes of two lh-server nodes, half the answers lost: exactly one success, with the response applied', async function () {
    await twoAnsweringNodes();
    const injected = sim.injectPendingError();
    loseEverySecondAnswer();
    const outs = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    const responses = ['Retry', 'Abort', 'Ignore'];
    for (let i = 0; i < 50; i++) {
      helper.getNode(i % 2 === 0 ? 'a1' : 'a2').receive({ payload: injected, selectedResponse: responses[i % 3], n: i });
    }
    await until(
      ['out', 'caught'],
      () => outs.length + caught.length === 50,
      () => `50 outcomes (${outs.length + caught.length})`,
    );

    const applied = sim.state.history.find((r) => r.id === injected.id)?.selectedResponse;
    assert.ok(applied, 'the instrument applied an answer');
    assert.equal(outs.length, 1, `exactly one success (got ${outs.map((m) => (m.payload as Msg).selectedResponse).join(', ')})`);
    assert.equal((outs[0].payload as Msg).selectedResponse, applied);
    assert.equal(outs[0].outcome, 'answered');
    for (const m of caught) {
      assert.equal(m.outcome, 'already-answered');
      assert.equal((m._error as Msg).kind, 'already-answered');
      assert.equal((m.error as Msg).code, 'LH_ALREADY_ANSWERED');
    }
    // the answer that went out was lost once and resent: the 409 was checked against the instrument's record
    const puts = proxy.log.filter(isAnswer);
    assert.equal(puts.length, 2, 'one answer (and one resend) went out; the other 49 were refused without a request');
    assert.deepEqual(
      puts.map((r) => (r.upstreamStatus < 300 ? 'applied' : r.upstreamStatus)),
      ['applied', 409],
    );
  });

  it('an answer resent after the operator answered on the instrument reports already-answered, not success', async function () {
    await twoAnsweringNodes();
    const injected = sim.injectPendingError();
    let first = true;
    proxy.decide = (r): ProxyDecision => {
      if (!isAnswer(r) || !first) return 'forward';
      first = false;
      sim.resolvePendingError(injected.id); // the operator chooses "Retry" on the screen; our "Abort" never arrived
      return 'drop-before';
    };
    const outs = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    helper.getNode('a1').receive({ payload: injected, selectedResponse: 'Abort' });
    await until(
      ['out', 'caught'],
      () => outs.length + caught.length === 1,
      () => 'an outcome',
    );
    assert.equal(outs.length, 0);
    assert.equal(caught[0].outcome, 'already-answered');
    assert.match(String((caught[0]._error as Msg).message), /already answered/);
    assert.equal(sim.state.history.find((r) => r.id === injected.id)?.selectedResponse, 'Retry');
    assert.deepEqual(
      proxy.log.filter(isAnswer).map((r) => r.upstreamStatus),
      [0, 409],
    );
  });

  it('a clear-errors whose answer was lost is reported as a failure, never resent into a wrong count', async function () {
    for (let i = 0; i < 3; i++) sim.injectPendingError();
    const server = serverFlow(sim, { withB: false, config: { baseUrl: proxy.url } });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'out', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    proxy.decide = (r): ProxyDecision => (r.path.endsWith('/errors/clear-errors') ? 'lose-after' : 'forward');
    const outs = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    helper.getNode('clear').receive({});
    await until(
      ['out', 'caught'],
      () => outs.length + caught.length === 1,
      () => 'an outcome',
    );
    assert.equal(outs.length, 0, 'no count is reported');
    assert.equal((caught[0]._error as Msg).operation, 'clear-errors');
    assert.equal(proxy.log.filter((r) => r.path.endsWith('/errors/clear-errors')).length, 1, 'sent once');
    assert.equal(sim.state.pendingErrors.length, 0, 'the instrument did clear them');
  });

  describe('recovery submissions (B)', function () {
    async function twoSubmittingNodes(): Promise<void> {
      const one = serverFlow(sim, { id: 's1' });
      const two = serverFlow(sim, { id: 's2' });
      await loadFlow(
        [
          ...one.nodes,
          ...two.nodes,
          { id: 'r1', type: 'lh-submit-recovery', server: 's1', kind: 'recovery', wires: [['out']] },
          { id: 'r2', type: 'lh-submit-recovery', server: 's2', kind: 'recovery', wires: [['out']] },
          { id: 'catcher', type: 'catch', scope: ['r1', 'r2'], wires: [['caught']] },
          { id: 'out', type: 'helper' },
          { id: 'caught', type: 'helper' },
        ],
        { ...one.credentials, ...two.credentials },
      );
    }

    it('concurrent submissions from two nodes: one success, the others already-answered without a request', async function () {
      sim.state.handlers.add('nodered1');
      const injected = sim.injectInstrumentError();
      await twoSubmittingNodes();
      const outs = collect(helper.getNode('out'));
      const caught = collect(helper.getNode('caught'));
      for (let i = 0; i < 10; i++)
        // actions 1 and 3 (action 2 requires an input value)
        helper.getNode(i % 2 === 0 ? 'r1' : 'r2').receive({ payload: injected, selectedActionId: i % 4 < 2 ? 1 : 3 });
      await until(
        ['out', 'caught'],
        () => outs.length + caught.length === 10,
        () => '10 outcomes',
      );
      assert.equal(outs.length, 1);
      assert.equal(outs[0].outcome, 'answered');
      for (const m of caught) assert.equal(m.outcome, 'already-answered');
      const submissions = sim.requests.filter((r) => r.api === 'B' && r.method === 'POST');
      assert.equal(submissions.length, 1);
      assert.equal((submissions[0].body as Msg).selectedActionId, outs[0].selectedActionId);
    });

    it('an error the operator already handled on the instrument reports already-answered', async function () {
      sim.state.handlers.add('nodered1');
      const injected = sim.injectInstrumentError();
      sim.resolveInstrumentError(injected.uuid);
      await twoSubmittingNodes();
      const caught = collect(helper.getNode('caught'));
      helper.getNode('r1').receive({ payload: injected, selectedActionId: 1 });
      await until(
        ['caught'],
        () => caught.length === 1,
        () => 'a failure',
      );
      assert.equal(caught[0].outcome, 'already-answered');
      assert.equal((caught[0]._error as Msg).kind, 'already-answered');
    });
  });

  describe('the answer ledger (client)', function () {
    const clients: LiquidHandlerClient[] = [];
    afterEach(async function () {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });
    afterEach(() => resetHomes());
    // as lh-server nodes do: each client of the instrument gets the books of the instrument's home
    const client = (): LiquidHandlerClient => {
      const books = homeOf(`${sim.baseUrl}|`);
      const c = new LiquidHandlerClient({ baseUrl: `${sim.baseUrl}/`, credentials: { ...USER }, books });
      clients.push(c);
      return c;
    };

    it('is shared by the clients of one instrument, records who answered, and frees the slot of a refused answer', async function () {
      const injected = sim.injectPendingError();
      const [one, two] = [client(), client()];
      const refused = await one.prep.answerRuntimeError({ id: injected.id, selectedResponse: 'Continue', errorData: [] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(refused instanceof LhError && refused.statusCode === 400, 'a response the error does not offer is refused');
      assert.equal(two.answers.lookup(injected.id), undefined, 'the refused answer freed the slot');

      const given = await one.prep.answerRuntimeError(
        { id: injected.id, selectedResponse: 'Ignore', errorData: [] },
        { by: 'alice' },
      );
      assert.equal(given.outcome, 'answered');
      const seen = two.answers.lookup(injected.id);
      assert.deepEqual(
        { ...seen, at: 0 },
        { errorKey: injected.id, response: 'Ignore', by: 'alice', at: 0, outcome: 'answered' },
      );

      const before = sim.requests.length;
      const second = await two.prep.answerRuntimeError({ id: injected.id, selectedResponse: 'Retry', errorData: [] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(second instanceof LhError && second.kind === 'already-answered');
      assert.match(second.message, /already answered by alice with "Ignore"/);
      assert.equal(sim.requests.length, before, 'nothing was sent');
    });
  });
});
