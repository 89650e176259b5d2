import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage } from '../support/runtime';
import { bServerFlow, loadFlowWithChange, messageWhere, pollsDone, setProperty } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('lh-answer-error', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let answer: LoadedNode;

  async function load(config: Record<string, unknown> = {}): Promise<void> {
    answer = await loadNode(sim, { id: 'answer', type: 'lh-answer-error', ...config });
  }

  const answers = (): unknown[] => sim.requests.filter((r) => r.path === '/api/v1/errors/runtime').map((r) => r.body);

  /** Sends msg and expects a failure that names `field`; nothing may reach PUT errors/runtime. */
  async function expectFailure(msg: Msg, field: string, message: RegExp): Promise<void> {
    await answer.expectFailure(msg, field, message);
    assert.deepEqual(answers(), []);
  }

  it('answers an error wired from lh-error-poll with only msg.selectedResponse added, and the poll reports it resolved once', async function () {
    const injected = sim.injectPendingError({ severity: 'Error' });
    const server = bServerFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          wires: [['choose'], ['resolved'], []],
        },
        setProperty('choose', 'selectedResponse', 'Abort', ['answer']),
        { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'resolved', type: 'helper' },
      ],
      server.credentials,
    );
    const resolvedMsgs = collect(helper.getNode('resolved'));
    const out = await nextMessage(helper.getNode('out'));
    const sent = {
      id: injected.id,
      groupId: injected.groupId,
      selectedResponse: 'Abort',
      errorData: [{ id: injected.id, selectedResponse: 'Abort' }], // an error without items is its own item, as real clients send it
    };
    assert.deepEqual(out.payload, sent);
    assert.equal(out.statusCode, 200);
    assert.equal(out.errorId, injected.id, 'msg properties of the poll pass through');
    assert.deepEqual(answers(), [sent]);
    const resolved = resolvedMsgs[0] ?? (await messageWhere('resolved', () => true)); // it may have come already
    assert.equal(resolved.errorId, injected.id);
    await pollsDone(sim, 3); // three more polls: the resolved error is not reported again
    assert.equal(resolvedMsgs.length, 1);
    assert.equal(sim.state.pendingErrors.length, 0);
  });

  it('refuses a response the error does not offer, listing the offered ones, and sends nothing', async function () {
    const injected = sim.injectPendingError();
    await load();
    await expectFailure(
      { payload: injected, selectedResponse: 'Continue' },
      'selectedResponse',
      /selectedResponse must be one of the responses error .* offers: Retry, Abort, Ignore \(got "Continue"\)/,
    );
  });

  it('accepts errorResponses given as plain strings', async function () {
    const injected = sim.injectPendingError();
    await load();
    const out = await answer.run({
      payload: { ...injected, errorResponses: ['Retry', 'Abort', 'Ignore'] },
      selectedResponse: 'Retry',
    });
    assert.equal((out.payload as Msg).selectedResponse, 'Retry');
  });

  it('takes an error given with errorResponses null (a list left null) as that error, checked against the listed responses', async function () {
    const injected = sim.injectPendingError();
    await load();
    const payload = { ...injected, errorResponses: null };
    // the responses are the ones the instrument lists under the id: one it does not offer is refused, nothing sent
    await expectFailure(
      { payload, selectedResponse: 'Continue' },
      'selectedResponse',
      /selectedResponse must be one of the responses error .* offers: Retry, Abort, Ignore \(got "Continue"\)/,
    );
    const out = await answer.run({ payload, selectedResponse: 'Abort' });
    assert.deepEqual(out.payload, {
      id: injected.id,
      groupId: injected.groupId,
      selectedResponse: 'Abort',
      errorData: [{ id: injected.id, selectedResponse: 'Abort' }],
    });
    assert.deepEqual(answers(), [out.payload]);
  });

  it('refuses an error given with errorResponses null that the instrument no longer lists: its responses cannot be checked, nothing sent', async function () {
    const injected = sim.injectPendingError();
    await load();
    sim.resolvePendingError(String(injected.id)); // answered on the touchscreen meanwhile
    // a response the error never offered would otherwise go out unchecked (a list of [] says "any", null says "unknown")
    await expectFailure(
      { payload: { ...injected, errorResponses: null }, selectedResponse: 'Continue' },
      'payload.errorResponses',
      /errorResponses is null and the instrument does not list error .* now .*nothing was sent/,
    );
  });

  it('refuses an id the instrument lists for two different errors: LH_AMBIGUOUS to Catch, nothing sent (issue 29.5)', async function () {
    sim.injectPendingError({ id: '7', title: 'Clot detected', severity: 'Error' });
    const door = sim.injectPendingError({ id: '7', title: 'Door open', severity: 'Warning', shareId: true });
    await load();
    for (const msg of [
      { errorId: '7', selectedResponse: 'Retry' },
      { payload: door, source: 'A', selectedResponse: 'Retry' },
    ]) {
      const failed = await answer.runFailing(msg);
      // Node-RED 3.1 does not copy an error's code into the Catch node's msg.error: the kind in msg._error says it there
      if (process.env.LH_NODE_RED !== 'node-red-3') assert.equal((failed.error as Msg).code, 'LH_AMBIGUOUS');
      assert.equal((failed._error as Msg).kind, 'ambiguous');
      assert.equal(failed.outcome, 'ambiguous');
      assert.match(String((failed.error as Msg).message), /error 7 is ambiguous.*"Clot detected".*"Door open"/);
    }
    assert.deepEqual(answers(), []);
  });

  it('finds the error by msg.errorId among the pending errors', async function () {
    const injected = sim.injectPendingError();
    await load();
    const msg = await answer.run({ errorId: injected.id, selectedResponse: 'Ignore', topic: 'keep' });
    assert.deepEqual(msg.payload, {
      id: injected.id,
      groupId: injected.groupId,
      selectedResponse: 'Ignore',
      errorData: [{ id: injected.id, selectedResponse: 'Ignore' }],
    });
    assert.equal(msg.topic, 'keep');
  });

  it('fails clearly for an error id that is not pending, and for a malformed one', async function () {
    await load();
    await expectFailure({ errorId: 'no-such-error', selectedResponse: 'Retry' }, 'errorId', /error no-such-error is not pending/);
    await expectFailure(
      { errorId: '../../clear-errors', selectedResponse: 'Retry' },
      'errorId',
      /errorId must be 1 to 200 letters/,
    );
    await expectFailure({ payload: 'x', selectedResponse: 'Retry' }, 'errorId', /errorId is required/);
  });

  it('requires a selected response', async function () {
    const injected = sim.injectPendingError();
    await load();
    await expectFailure({ payload: injected }, 'selectedResponse', /selectedResponse is required/);
    await expectFailure({ payload: injected, selectedResponse: 7 }, 'selectedResponse', /must be a non-empty text/);
  });

  it('a response set in the dialog is not overridden: a msg.selectedResponse that says otherwise is refused, nothing sent', async function () {
    const injected = sim.injectPendingError();
    await load({ selectedResponse: 'Ignore', selectedResponseType: 'str' });
    sim.clearRequests();
    await expectFailure(
      { payload: injected, selectedResponse: 'Abort' },
      'selectedResponse',
      /msg\.selectedResponse is "Abort" but this node's selectedResponse is "Ignore", set in its dialog: nothing was sent/,
    );
    assert.deepEqual(
      sim.requests.filter((r) => r.method === 'PUT'),
      [],
      'the dialog answer went out for a msg that chose another',
    );
    // one that agrees is no contradiction
    const out = await answer.run({ payload: injected, selectedResponse: 'Ignore' });
    assert.equal((out.payload as Msg).selectedResponse, 'Ignore');
  });

  it('answers errorData items with the main response by default and with errorDataResponses when given', async function () {
    const injected = sim.injectPendingError({
      errorData: [{ id: 'ch1' }, { id: 'ch2', responses: ['Retry', 'Skip'] }],
    });
    await load();
    let out = await answer.run({ payload: injected, selectedResponse: 'Retry', errorDataResponses: { ch2: 'Skip' } });
    assert.deepEqual((out.payload as Msg).errorData, [
      { id: 'ch1', selectedResponse: 'Retry' },
      { id: 'ch2', selectedResponse: 'Skip' },
    ]);
    const second = sim.injectPendingError({ errorData: [{ id: 'a' }, { id: 'b' }] });
    out = await answer.run({
      payload: second,
      selectedResponse: 'Abort',
      errorDataResponses: [{ id: 'b', selectedResponse: 'Ignore' }],
    });
    assert.deepEqual((out.payload as Msg).errorData, [
      { id: 'a', selectedResponse: 'Abort' },
      { id: 'b', selectedResponse: 'Ignore' },
    ]);
  });

  it('refuses per-item responses for unknown items or not offered by the item, and sends nothing', async function () {
    const injected = sim.injectPendingError({ errorData: [{ id: 'ch1', responses: ['Skip'] }] });
    await load();
    sim.clearRequests();
    await expectFailure(
      { payload: injected, selectedResponse: 'Retry' },
      'selectedResponse',
      /one of the responses item ch1 offers: Skip/,
    );
    await expectFailure(
      { payload: injected, selectedResponse: 'Retry', errorDataResponses: { ch9: 'Skip' } },
      'errorDataResponses.ch9',
      /is not an errorData item of error .* \(items: ch1\)/,
    );
    await expectFailure(
      { payload: injected, selectedResponse: 'Retry', errorDataResponses: 'Skip' },
      'errorDataResponses',
      /must be an object/,
    );
  });

  it('reports an error the instrument already handled (409) to Catch nodes', async function () {
    const injected = sim.injectPendingError();
    sim.resolvePendingError(injected.id);
    await load();
    const details = (await answer.runCaught({ payload: injected, selectedResponse: 'Retry' }))._error as Msg;
    assert.equal(details.statusCode, 409);
    assert.equal(details.operation, 'answer-error');
  });
});
