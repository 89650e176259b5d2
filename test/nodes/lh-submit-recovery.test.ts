import assert from 'node:assert/strict';

import { identityOf } from '../../src/client/error-identity';
import { restartMemory } from '../support/homes';
import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage } from '../support/runtime';
import { recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';
import { bServerFlow, loadFlowWithChange, pollsDone, setProperty } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('lh-submit-recovery', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let submit: LoadedNode;

  const submissions = (): { path: string; body: unknown }[] => recoverySubmissions(sim);

  async function load(recovery: Record<string, unknown> = {}): Promise<void> {
    submit = await loadNode(
      sim,
      { id: 'submit', type: 'lh-submit-recovery', kind: 'recovery', ...recovery },
      { server: { withB: true } },
    );
  }

  const expectFailure = (msg: Msg, field: string | undefined, message: RegExp): Promise<Msg> =>
    submit.expectFailure(msg, field, message);

  it('submits a recovery for an error wired from lh-error-poll with only msg.selectedActionId added', async function () {
    const injected = sim.injectInstrumentError();
    sim.state.handlers.add('nodered1'); // registered (lh-register-handler's own tests cover registering)
    const server = bServerFlow(sim);
    await loadFlowWithChange(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'B',
          interval: 0.5,
          wires: [['choose'], ['resolved'], []],
        },
        setProperty('choose', 'selectedActionId', 3, ['submit']),
        { id: 'submit', type: 'lh-submit-recovery', server: 'server', kind: 'recovery', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'resolved', type: 'helper' },
      ],
      server.credentials,
    );
    const resolved = collect(helper.getNode('resolved'));
    const out = await nextMessage(helper.getNode('out'));
    assert.equal((out.payload as Msg).success, true);
    assert.equal(out.uuid, injected.uuid);
    const sent = submissions();
    assert.equal(sent.length, 1);
    assert.equal(sent[0].path, `/api/vector/v3/instrument-errors/${injected.uuid}/recovery`);
    const body = sent[0].body as Msg;
    assert.equal(body.uuid, injected.uuid);
    assert.equal(body.selectedActionId, 3);
    assert.equal(body.selectedActionIsRecovery, true);
    assert.equal(body.errorHandlingKey, 'nodered1');
    assert.ok(!Number.isNaN(Date.parse(String(body.date))));
    await pollsDone(sim, 3, 'B'); // three more polls: the resolved error is not reported again
    assert.equal(resolved.length, 1);
    assert.equal(sim.state.instrumentErrors[0].acceptedSubmissions, 1);
  });

  it('fails clearly with the instrument message when the key is not registered, and does not retry', async function () {
    const injected = sim.injectInstrumentError();
    await load();
    const details = await expectFailure(
      { payload: injected, selectedActionId: 1 },
      undefined,
      /submit-recovery for error .* was refused: .*/,
    );
    assert.equal(details.operation, 'submit-recovery');
    assert.equal((details.body as Msg).success, false);
    assert.equal(submissions().length, 1);
    assert.equal(sim.state.instrumentErrors[0].handled, false);
  });

  it('submits an action with selectedActionIsRecovery taken from the error, msg.kind, inputs and an explicit key', async function () {
    const injected = sim.injectInstrumentError();
    sim.state.handlers.add('other2');
    await load({ kind: 'msg' });
    const out = await submit.run({ payload: injected, kind: 'action', selectedActionId: 4, clientKey: 'other2', inputs: [] });
    assert.equal((out.payload as Msg).success, true);
    const sent = submissions();
    assert.equal(sent[0].path, `/api/vector/v3/instrument-errors/${injected.uuid}/action`);
    assert.equal((sent[0].body as Msg).selectedActionIsRecovery, false);
    assert.equal((sent[0].body as Msg).errorHandlingKey, 'other2');
  });

  it('takes msg.uuid when there is no polled error in the payload', async function () {
    const injected = sim.injectInstrumentError();
    sim.state.handlers.add('nodered1');
    await load({ selectedActionId: '1', selectedActionIdType: 'num' });
    const out = await submit.run({ uuid: injected.uuid });
    assert.equal((out.payload as Msg).success, true);
    assert.equal((submissions()[0].body as Msg).selectedActionIsRecovery, true);
    // kept as the answer of the error listed under the uuid then: never counted for a later error under that uuid
    type Answers = { lookup(key: string, identity?: unknown): { response: string } | undefined };
    const answers = (helper.getNode('server') as unknown as { client: { answers: Answers } }).client.answers;
    assert.equal(answers.lookup(injected.uuid, identityOf(injected))?.response, '1');
    assert.equal(answers.lookup(injected.uuid, identityOf({ ...injected, title: 'Door open during run' })), undefined);
  });

  it('an action set in the dialog is not overridden: a msg.selectedActionId that says otherwise is refused, nothing sent', async function () {
    const injected = sim.injectInstrumentError();
    sim.state.handlers.add('nodered1');
    await load({ selectedActionId: '1', selectedActionIdType: 'num' });
    await expectFailure(
      { payload: injected, selectedActionId: 2 },
      'selectedActionId',
      /msg\.selectedActionId is 2 but this node's selectedActionId is 1, set in its dialog: nothing was sent/,
    );
    assert.deepEqual(submissions(), [], 'the dialog action went out for a msg that chose another');
    // the same action in the msg (a number or its text) is no contradiction
    const out = await submit.run({ payload: injected, selectedActionId: '1' });
    assert.equal((out.payload as Msg).success, true);
  });

  it('an action set in the dialog takes the same id in any form the id check reads (3, "3", " 3", "03"): not refused', async function () {
    sim.state.handlers.add('nodered1');
    // the dialog's forms: as the editor saves it, a number in a hand-written flow, a text id
    for (const dialog of [
      { selectedActionId: '3', selectedActionIdType: 'num' },
      { selectedActionId: 3, selectedActionIdType: 'num' },
      { selectedActionId: '3', selectedActionIdType: 'str' },
    ]) {
      await helper.unload();
      await load(dialog);
      for (const asked of [3, '3', ' 3', '3 ', '03', '003']) {
        const injected = sim.injectInstrumentError(); // one answer per error: a new error for each form
        const what = `dialog ${JSON.stringify(dialog.selectedActionId)} (${dialog.selectedActionIdType}), msg ${JSON.stringify(asked)}`;
        const outs = collect(submit.out);
        const caught = collect(submit.caught);
        submit.node.receive({ payload: injected, selectedActionId: asked });
        await until(() => outs.length + caught.length > 0, what);
        assert.deepEqual(
          caught.map((m) => (m._error as Msg).message),
          [],
          what,
        );
        assert.equal((outs[0].payload as Msg).success, true, what);
      }
      // another id in any form is still refused
      for (const asked of [2, '2', ' 4', '30']) {
        const injected = sim.injectInstrumentError();
        await expectFailure(
          { payload: injected, selectedActionId: asked },
          'selectedActionId',
          /but this node's selectedActionId is/,
        );
      }
    }
  });

  it('validates everything before sending', async function () {
    const injected = sim.injectInstrumentError();
    await load();
    await expectFailure({ uuid: 'not-a-uuid', selectedActionId: 1 }, 'uuid', /uuid must be a UUID/);
    await expectFailure({ selectedActionId: 1 }, 'uuid', /uuid is required/);
    await expectFailure({ payload: injected }, 'selectedActionId', /selectedActionId is required/);
    await expectFailure({ payload: injected, selectedActionId: 'one' }, 'selectedActionId', /whole number/);
    await expectFailure(
      { payload: injected, selectedActionId: 9 },
      'selectedActionId',
      /one of the actions error .* offers: 1 Retry \(default\), 2 /,
    );
    await expectFailure(
      { payload: injected, selectedActionId: 1, selectedActionIsRecovery: 'yes' },
      'selectedActionIsRecovery',
      /boolean/,
    );
    await expectFailure(
      { payload: injected, selectedActionId: 1, inputs: [{ id: 'a', value: '2' }] },
      'inputs[0].id',
      /whole number/,
    );
    await expectFailure(
      { payload: injected, selectedActionId: 1, detailedErrorRecoveries: {} },
      'detailedErrorRecoveries',
      /array/,
    );
    await expectFailure({ payload: injected, selectedActionId: 1, date: 'yesterday' }, 'date', /ISO 8601/);
    await expectFailure({ payload: injected, selectedActionId: 1, errorHandlingKey: 'has space' }, 'errorHandlingKey', /letters/);
    assert.equal(submissions().length, 0);
  });

  it('validates the kind from msg.kind', async function () {
    const injected = sim.injectInstrumentError();
    await load({ kind: 'msg' });
    await expectFailure(
      { payload: injected, selectedActionId: 1, kind: 'retry' },
      'kind',
      /kind must be one of recovery, action/,
    );
    assert.equal(submissions().length, 0);
  });
});
