import assert from 'node:assert/strict';

import { busiestWindow } from '../support/busiest-window';
import { useInstrument } from '../support/node-suite';
import { loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow, seenErrors } from './lh-error-poll.support';

const ERROR_POLL = '/api/v1/errors/check-for-pending-errors';
const NODES = 20;
const INTERVAL_MS = 1000;

/** The longest time between two consecutive polls. */
function largestGap(times: readonly number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 1; i < t.length; i++) most = Math.max(most, t[i] - t[i - 1]);
  return most;
}

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
      interval: INTERVAL_MS / 1000,
      listen: false,
      wires: [[], [], []],
    }));
    await loadFlow([...server.nodes, ...polls], server.credentials);
    const pollTimes = (): number[] =>
      sim.requests
        .filter((r) => r.path === ERROR_POLL)
        .map((r) => r.time)
        .sort((x, y) => x - y);
    // waits on the polls themselves (four rounds), not on a fixed time; rounds are counted, not timed
    await until(() => pollTimes().length >= NODES * 4, 'four rounds of polls', 25000);
    const times = pollTimes();
    const start = times.slice(0, NODES); // the first poll of each node (its catch-up, paced)
    const settled = times.slice(NODES * 2); // from the third round on (every node on its slot)
    // Ratios of the interval L and the fleet N, not absolute timings, so a busy machine (timers firing late, the
    // event loop stalling now and then) does not fail it. The unit test (poll-schedule.test.ts) checks the exact
    // slots on a fake clock. A herd (all N polls within a tenth of L, as before the spread) puts all N in one window of
    // L/10 and leaves a gap of at least 0.9·L; the spread puts about N/10 + 1 in any L/10 and no gap near L/2.
    assert.ok(
      busiestWindow(start, INTERVAL_MS / 10) <= NODES / 2,
      `first round: ${busiestWindow(start, INTERVAL_MS / 10)} of ${NODES} polls in ${INTERVAL_MS / 10} ms`,
    );
    assert.ok(
      busiestWindow(settled, INTERVAL_MS / 10) <= NODES / 2,
      `settled: ${busiestWindow(settled, INTERVAL_MS / 10)} of ${NODES} polls in ${INTERVAL_MS / 10} ms`,
    );
    assert.ok(largestGap(settled) < INTERVAL_MS / 2, `settled: a gap of ${largestGap(settled)} ms without a poll`);
  });
});
