import assert from 'node:assert/strict';

import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('lh-error-log', function () {
  this.timeout(30000);
  const sim = useInstrument();
  let history: LoadedNode;

  const listRequests = (): Record<string, string>[] =>
    sim.requests.filter((r) => r.path === '/api/v1/errors').map((r) => r.query);

  async function load(node: Record<string, unknown> = {}): Promise<void> {
    // limit cleared in the dialog, so msg.limit counts (left out, it would take the dialog's default of 50)
    history = await loadNode(sim, { id: 'history', type: 'lh-error-log', operation: 'list', limit: '', ...node });
  }

  const send = (msg: Msg): Promise<Msg> => history.run(msg);
  const expectFailure = (msg: Msg, field: string, message: RegExp): Promise<Msg> => history.expectFailure(msg, field, message);

  it('lists one page with offset and limit from msg', async function () {
    for (let i = 0; i < 5; i++) sim.injectPendingError({ title: `e${i}` });
    await load();
    const msg = await send({ offset: 1, limit: 2, topic: 'keep' });
    const page = msg.payload as { totalItemCount: number; items: unknown[] };
    assert.equal(page.totalItemCount, 5);
    assert.equal(page.items.length, 2);
    assert.equal(msg.totalItemCount, 5);
    assert.equal(msg.topic, 'keep');
    assert.deepEqual(listRequests(), [{ offset: '1', limit: '2' }]);
  });

  it('reads all pages, and stops at the cap with truncated set', async function () {
    for (let i = 0; i < 5; i++) sim.injectPendingError({ title: `e${i}` });
    await load({ allPages: true, limit: '2', limitType: 'num' });
    let msg = await send({});
    assert.equal((msg.payload as { items: unknown[] }).items.length, 5);
    assert.equal(msg.truncated, false);
    assert.equal(listRequests().length, 3);
    await helper.unload();
    await load({ allPages: true, limit: '2', limitType: 'num', maxItems: 3 });
    msg = await send({});
    assert.equal((msg.payload as { items: unknown[] }).items.length, 3);
    assert.equal(msg.truncated, true);
  });

  it('reads one error by msg.errorId or the dialog id', async function () {
    const injected = sim.injectPendingError({ title: 'one' });
    await load({ operation: 'get' });
    let msg = await send({ errorId: injected.id });
    assert.equal((msg.payload as Msg).id, injected.id);
    await helper.unload();
    await load({ operation: 'get', errorId: injected.id, errorIdType: 'str' });
    msg = await send({ errorId: 'ignored' });
    assert.equal((msg.payload as Msg).id, injected.id);
  });

  it('validates offset, limit, cap, error id and operation before sending', async function () {
    await load({ operation: 'msg' });
    await expectFailure({ operation: 'list', limit: 0 }, 'limit', /limit must be a whole number from 1/);
    await expectFailure({ operation: 'list', offset: -1 }, 'offset', /offset must be a whole number from 0/);
    await expectFailure({ operation: 'list', offset: 'x' }, 'offset', /whole number/);
    await expectFailure({ operation: 'get' }, 'errorId', /errorId is required/);
    await expectFailure({ operation: 'get', errorId: 'a/b' }, 'errorId', /errorId must be 1 to 200 letters/);
    await expectFailure({ operation: 'delete' }, 'operation', /operation must be one of list, get/);
    assert.equal(sim.requests.filter((r) => r.path.startsWith('/api/v1/errors')).length, 0);
  });

  it('reports an unknown error id (404) to Catch nodes', async function () {
    await load({ operation: 'get' });
    const details = (await history.runCaught({ errorId: 'missing' }))._error as Msg;
    assert.equal(details.statusCode, 404);
  });
});
