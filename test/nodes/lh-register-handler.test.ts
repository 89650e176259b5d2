import assert from 'node:assert/strict';

import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-register-handler', function () {
  this.timeout(30000);
  const sim = useInstrument();
  let handler: LoadedNode;

  const handlerRequests = (): { method: string; body: unknown }[] =>
    sim.requests.filter((r) => r.path === '/api/vector/v3/error-handler');

  async function load(node: Record<string, unknown> = {}, clientKey = 'nodered1'): Promise<void> {
    handler = await loadNode(
      sim,
      { id: 'handler', type: 'lh-register-handler', operation: 'msg', ...node },
      // on a tab with positions, as in a real flows.json: Node-RED then stops flow nodes before config nodes
      { server: { withB: true, clientKey }, tab: 'handler' },
    );
  }

  const send = (msg: Msg): Promise<Msg> => handler.run(msg);
  const expectFailure = (msg: Msg, field: string, message: RegExp): Promise<Msg> => handler.expectFailure(msg, field, message);

  it('registers, checks and unregisters with the lh-server node key', async function () {
    await load();
    let msg = await send({ operation: 'check', topic: 't' });
    assert.equal(msg.payload, false);
    assert.equal(msg.topic, 't');
    msg = await send({ operation: 'register' });
    assert.equal(typeof msg.payload, 'string');
    assert.equal(msg.clientKey, 'nodered1');
    assert.ok(sim.state.handlers.has('nodered1'));
    assert.equal((await send({ operation: 'check' })).payload, true);
    await send({ operation: 'unregister' });
    assert.equal(sim.state.handlers.size, 0);
    const requests = handlerRequests();
    assert.deepEqual(
      requests.map((r) => r.method),
      ['GET', 'POST', 'GET', 'DELETE'],
    );
    assert.equal(requests[1].body, 'nodered1');
  });

  it('takes msg.clientKey when the dialog key is empty, and the dialog key over msg.clientKey', async function () {
    await load();
    await send({ operation: 'register', clientKey: 'fromMsg1' });
    assert.ok(sim.state.handlers.has('fromMsg1'));
    await helper.unload();
    await load({ clientKey: 'dialogKey2', clientKeyType: 'str' });
    await send({ operation: 'register', clientKey: 'fromMsg3' });
    assert.ok(sim.state.handlers.has('dialogKey2'));
    assert.ok(!sim.state.handlers.has('fromMsg3'));
  });

  it('refuses keys that are not letters and digits, and a missing key, before sending', async function () {
    await load({}, '');
    await expectFailure({ operation: 'register', clientKey: 'has space' }, 'clientKey', /clientKey must be 1 to 128 letters/);
    await expectFailure({ operation: 'unregister', clientKey: 'semi;colon' }, 'clientKey', /letters \(A-Z, a-z\) and digits/);
    await expectFailure({ operation: 'register', clientKey: 42 }, 'clientKey', /letters/);
    await expectFailure({ operation: 'register' }, 'clientKey', /clientKey is required/);
    await expectFailure({ operation: 'subscribe' }, 'operation', /operation must be one of register, unregister, check/);
    assert.equal(handlerRequests().length, 0);
  });

  it('registers on deploy and unregisters when the node stops (while-deployed option)', async function () {
    await load({ operation: 'check', autoRegister: true });
    // the registration on deploy runs in the background: wait for it at the instrument, then check says so
    await until(() => sim.state.handlers.has('nodered1'), 'the registration on deploy', 10000);
    assert.equal((await send({})).payload, true);
    await helper.unload();
    assert.equal(sim.state.handlers.size, 0);
    const methods = handlerRequests().map((r) => r.method);
    assert.equal(methods.filter((m) => m === 'POST').length, 1);
    assert.equal(methods.filter((m) => m === 'DELETE').length, 1);
  });
});
