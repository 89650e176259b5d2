import assert from 'node:assert/strict';
import { Simulator } from '../../src/simulator';
import { collect, helper, loadFlow, nextMessage, serverFlow, startSimulator } from '../support/runtime';

describe('lh-clear-errors', function () {
  let sim: Simulator;

  before(async function () {
    sim = await startSimulator();
  });
  after(async function () {
    await sim.stop();
  });
  afterEach(async function () {
    await helper.unload();
    sim.reset();
  });

  async function load(): Promise<void> {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  }

  it('clears pending errors, outputs the counts and keeps other msg properties', async function () {
    sim.injectPendingError({ severity: 'Warning' });
    sim.injectPendingError({ severity: 'Fatal' });
    await load();
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 'go', topic: 'nightly', correlation: 7 });
    const msg = await out;
    assert.deepEqual(msg.payload, { numberOfErrorsCleared: 1, numberOfErrorsNotCleared: 1 });
    assert.equal(msg.statusCode, 200);
    assert.equal(msg.topic, 'nightly');
    assert.equal(msg.correlation, 7);
    const clear = sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors');
    assert.equal(clear.length, 1);
    assert.equal(clear[0].method, 'PUT');
    assert.match(clear[0].authorization ?? '', /^Bearer ey/);
  });

  it('reports an unreachable instrument to Catch nodes with msg.error details', async function () {
    await load();
    await sim.stop();
    try {
      const caught = nextMessage(helper.getNode('caught'));
      const outputs = collect(helper.getNode('out'));
      helper.getNode('clear').receive({ payload: 1 });
      const msg = await caught;
      const details = msg._error as Record<string, unknown>;
      assert.equal(details.operation, 'authenticate');
      assert.match(String(details.message), /cannot reach the preparation service/);
      assert.match(String((msg.error as Record<string, unknown>).message), /cannot reach/);
      assert.equal(outputs.length, 0);
    } finally {
      await sim.start();
    }
  });
});
