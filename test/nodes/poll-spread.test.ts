import assert from 'node:assert/strict';

import { busiestWindow } from '../support/busiest-window';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow } from './lh-error-poll.support';

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
  const sim = useInstrument({ afterEach: () => restartMemory() });

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
    // waits on the polls themselves (six rounds), not on a fixed time; rounds are counted, not timed
    await until(() => pollTimes().length >= NODES * 6, 'six rounds of polls', 25000);
    const times = pollTimes();
    const start = times.slice(0, NODES); // the first poll of each node (its catch-up, paced)
    // from the third round on (every node on its slot): rounds 3 to 6, N polls each
    const rounds = [2, 3, 4, 5].map((r) => times.slice(r * NODES, (r + 1) * NODES));
    // Against a herd's signature, not absolute timings, so a busy machine does not fail it: a herd (all N polls
    // within a tenth of L, as before the spread) puts all N in one window of L/10 in every round and leaves a gap of at
    // least 0.9·L; the spread puts about N/10 + 1 in any L/10 and no gap near L/2. An event loop that stalls (a CPU hog
    // beside the test) bunches the polls of the round it hits, as it would any timers: most rounds stay spread. The
    // unit test (poll-schedule.test.ts) checks the exact slots on a fake clock.
    const window = INTERVAL_MS / 10;
    assert.ok(busiestWindow(start, window) < NODES, `first round: all ${NODES} polls in ${window} ms (a burst, not paced)`);
    const figures = rounds.map((r) => ({ busiest: busiestWindow(r, window), gap: largestGap(r) }));
    const spread = figures.filter((f) => f.busiest <= NODES / 2 && f.gap < INTERVAL_MS / 2).length;
    assert.ok(
      spread >= rounds.length / 2,
      `settled: ${spread} of ${rounds.length} rounds spread (at most ${NODES / 2} polls in ${window} ms, no gap of ${INTERVAL_MS / 2} ms): ${JSON.stringify(figures)}`,
    );
  });
});
