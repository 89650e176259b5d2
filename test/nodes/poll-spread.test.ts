import assert from 'node:assert/strict';

import { busiestWindow } from '../support/busiest-window';
import { useInstrument } from '../support/node-suite';
import { loadFlow } from '../support/runtime';
import { bServerFlow, seenErrors } from './lh-error-poll.support';

const ERROR_POLL = '/api/v1/errors/check-for-pending-errors';
const NODES = 20;

/** The most of `times` in any window [t, t + windowMs). */
describe('a fleet of poll nodes in one Node-RED, in Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => seenErrors.forgetAllWatches() });

  it('20 lh-error-poll nodes deployed together poll spread over their 1 s interval, not in one burst', async function () {
    const server = bServerFlow(sim, { withB: false });
    const polls = Array.from({ length: NODES }, (_, i) => ({
      id: `poll${i}`,
      type: 'lh-error-poll',
      server: 'server',
      source: 'A',
      interval: 1,
      listen: false,
      wires: [[], [], []],
    }));
    const deployed = Date.now();
    await loadFlow([...server.nodes, ...polls], server.credentials);
    await new Promise((resolve) => setTimeout(resolve, 4500));
    const times = sim.requests.filter((r) => r.path === ERROR_POLL).map((r) => r.time);
    const start = times.filter((t) => t < deployed + 2000);
    const settled = times.filter((t) => t >= deployed + 2000);
    // 20 slots 50 ms apart: 2 or 3 polls in any 100 ms when on time; one more is left for timers firing late.
    // The first polls are paced 50 ms apart and the second ones go to the slots: at most twice that at the start.
    // (Before, the first polls went together and the steady ones within a tenth of the interval: 20 in 100 ms.)
    assert.ok(start.length >= NODES * 2, `${start.length} polls in the first 2 s`);
    assert.ok(busiestWindow(start, 100) <= 7, `first 2 s: ${busiestWindow(start, 100)} polls in 100 ms`);
    assert.ok(settled.length >= NODES * 2, `${settled.length} polls after settling`);
    assert.ok(busiestWindow(settled, 100) <= 4, `settled polls: ${busiestWindow(settled, 100)} in 100 ms`);
  });
});
