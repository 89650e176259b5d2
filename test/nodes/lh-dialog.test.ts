import assert from 'node:assert/strict';

import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('lh-dialog', function () {
  const sim = useInstrument();
  let dialog: LoadedNode;

  async function load(config: Msg = {}): Promise<void> {
    dialog = await loadNode(
      sim,
      { id: 'dialog', type: 'lh-dialog', viewResult: '', ...config },
      { only: ['lh-server', 'lh-dialog'] },
    );
  }

  const closeViews = (): unknown[] => sim.requests.filter((r) => r.path === '/api/v1/maintenance/close-view').map((r) => r.body);

  /** The msg lh-events sends for a message box. */
  function boxEvent(buttons: string[] = ['Ok', 'Cancel']): { msg: Msg; viewId: string } {
    const box = sim.openMessageBox({ title: 'Door open', text: 'Close the door', buttons });
    return {
      viewId: box.viewId,
      msg: {
        topic: 'messagebox',
        payload: { code: 'messagebox', description: box.title, data: { viewId: box.viewId, title: box.title, buttons } },
        instrument: { name: 'sim' },
      },
    };
  }

  it('closes a message box from the lh-events msg plus msg.viewResult (any case), once, and passes the msg on', async function () {
    await load();
    const { msg, viewId } = boxEvent();
    const out = await dialog.run({ ...msg, viewResult: 'cancel', viewInput: 'closed by the night shift' });
    assert.deepEqual(out.payload, { viewId, viewResult: 'Cancel', viewInput: 'closed by the night shift' });
    assert.equal(out.statusCode, 200);
    assert.equal(out.topic, 'messagebox', 'other msg properties pass through');
    assert.deepEqual(closeViews(), [{ viewId, viewResult: 'Cancel', viewInput: 'closed by the night shift' }]);
    assert.deepEqual(
      sim.views.closed.map((c) => [c.viewId, c.viewResult]),
      [[viewId, 'Cancel']],
    );
  });

  it('finds the view id under other key names (Id, ViewID) and in msg.viewId', async function () {
    await load({ viewResult: 'Ok' });
    const a = boxEvent(['Ok']);
    await dialog.run({ payload: { code: 'messagebox', data: { ID: a.viewId } } });
    const b = boxEvent(['Ok']);
    await dialog.run({ payload: { Code: 'messagebox', Data: { ViewID: b.viewId } } });
    const c = boxEvent(['Ok']);
    await dialog.run({ viewId: c.viewId, payload: 'anything' });
    assert.deepEqual(
      sim.views.closed.map((x) => x.viewId),
      [a.viewId, b.viewId, c.viewId],
    );
  });

  it('a result chosen in the dialog is not overridden by msg.viewResult: a contradicting one is refused, nothing sent', async function () {
    await load({ viewResult: 'Ok' });
    const { msg, viewId } = boxEvent();
    await dialog.expectFailure(
      { ...msg, viewResult: 'Cancel' },
      'viewResult',
      /msg\.viewResult is "Cancel" but this node's Answer is "Ok", chosen in its dialog: nothing was sent/,
    );
    assert.deepEqual(closeViews(), []);
    // one that agrees (in any case) is no contradiction
    const out = await dialog.run({ ...msg, viewResult: 'ok' });
    assert.deepEqual(out.payload, { viewId, viewResult: 'Ok', viewInput: '' });
  });

  it('validates viewResult and viewId before sending, naming the field; nothing is sent', async function () {
    await load();
    const { msg } = boxEvent();
    await dialog.expectFailure(
      { ...msg, viewResult: 'Maybe' },
      'viewResult',
      /viewResult must be one of Ok, Yes, No, Cancel, Abort \(got "Maybe"\)/,
    );
    await dialog.expectFailure({ ...msg }, 'viewResult', /viewResult is required/);
    await dialog.expectFailure({ payload: { code: 'finished', data: {} }, viewResult: 'Ok' }, 'viewId', /viewId is required/);
    await dialog.expectFailure({ viewId: 'has spaces in it', viewResult: 'Ok' }, 'viewId', /viewId must be the id of the dialog/);
    assert.deepEqual(closeViews(), []);
  });

  it('a dialog that is no longer open fails with 404 on the viewId', async function () {
    await load({ viewResult: 'Ok' });
    const failure = await dialog.expectFailure({ viewId: 'ffffffffffffffffffffffffffffffff' }, 'viewId', /no open dialog/);
    assert.equal(failure.statusCode, 404);
  });

  it('is never resent automatically: a 503 is reported after one request', async function () {
    await load({ viewResult: 'Ok' });
    await dialog.run(boxEvent().msg); // logged in
    const { msg } = boxEvent();
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    const failure = await dialog.expectFailure(msg, undefined, /close-view failed: 503/);
    assert.equal(failure.statusCode, 503);
    assert.equal(closeViews().length, 2, 'one request for each msg');
  });
});
