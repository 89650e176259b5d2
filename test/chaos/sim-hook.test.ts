/** The simulator hook the chaos test uses for "two errors under one id" (PendingErrorSeed.shareId). */
import assert from 'assert';

import { Simulator } from '../../src/simulator';

describe('chaos: the simulator lists two errors under one id (shareId)', function () {
  it('shareId keeps the pending error and lists the new one beside it; reuseId alone replaces it', function () {
    const sim = new Simulator();
    const first = sim.injectPendingError({ title: 'first' });
    sim.injectPendingError({ title: 'second', id: first.id, shareId: true });
    assert.deepStrictEqual(
      sim.state.pendingErrors.filter((e) => e.id === first.id).map((e) => e.title),
      ['first', 'second'],
    );
    sim.injectPendingError({ title: 'third', id: first.id, reuseId: true });
    assert.deepStrictEqual(
      sim.state.pendingErrors.filter((e) => e.id === first.id).map((e) => e.title),
      ['third'],
    );
  });
});
