import assert from 'node:assert/strict';

import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';

describe('lh-clear-errors', function () {
  const sim = useInstrument();

  const load = (): Promise<LoadedNode> => loadNode(sim, { id: 'clear', type: 'lh-clear-errors' });

  it('clears pending errors, outputs the counts and keeps other msg properties', async function () {
    sim.injectPendingError({ severity: 'Warning' });
    sim.injectPendingError({ severity: 'Fatal' });
    const msg = await (await load()).run({ payload: 'go', topic: 'nightly', correlation: 7 });
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
    const clear = await load();
    await sim.stop();
    try {
      const msg = await clear.runFailing({ payload: 1 });
      const details = msg._error as Record<string, unknown>;
      assert.equal(details.operation, 'authenticate');
      assert.match(String(details.message), /cannot reach the preparation service/);
      assert.match(String((msg.error as Record<string, unknown>).message), /cannot reach/);
    } finally {
      await sim.start();
    }
  });
});
