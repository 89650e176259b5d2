/**
 * Review (review64): redeploys while the event sockets are connecting or reconnecting leave no socket, listener or
 * second connection behind. Two lh-events and two lh-error-polls of one instrument share one connection per channel;
 * they are redeployed (the 'nodes' deploy of the editor) at drawn moments (seeded; LH_SEED replays) while the
 * instrument closes every socket at once (each redeploy then lands in a connect, a close or a back-off wait), and
 * while the instrument restarts (attempts refused). Invariants, sampled at every redeploy and at the end: at most one
 * socket per channel open at the instrument, the listeners of the client back to what the nodes need, one socket
 * per channel once the instrument behaves, and none once the flow is stopped.
 */
import assert from 'node:assert/strict';

import type { Simulator } from '../../src/simulator';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

interface Channel {
  listeners: Set<unknown>;
}
interface EventsInternals {
  listenerCount(event: string): number;
  state(channel: 'errors' | 'events'): string;
  channels: { errors: Channel; events: Channel };
}

function events(): EventsInternals {
  return (helper.getNode('server') as unknown as { client: { events: EventsInternals } }).client.events;
}

function flow(sim: Simulator, deploy: number): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
  const server = bServerFlow(sim, { withB: false });
  const name = `deploy ${deploy}`;
  return {
    nodes: [
      ...server.nodes,
      { id: 'ev1', type: 'lh-events', server: 'server', codes: '', name, wires: [[], []] },
      { id: 'ev2', type: 'lh-events', server: 'server', codes: 'messagebox', name, wires: [[], []] },
      { id: 'poll1', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, name, wires: [[], [], []] },
      { id: 'poll2', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, name, wires: [[], [], []] },
    ],
    credentials: server.credentials,
  };
}

describe(`review: event sockets redeployed while connecting or reconnecting (seed ${SEED})`, function () {
  this.timeout(40_000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  afterEach(function () {
    sim.setSocketsCloseAtOnce(false);
  });

  const counts = (): { events: number; errors: number } => sim.eventSocketInfo.counts;
  const sample = (seen: string[], when: string): void => {
    const c = counts();
    if (c.events > 1 || c.errors > 1) seen.push(`${when}: ${JSON.stringify(c)} sockets open`);
  };

  async function settledOnOneEach(listeners: { state: number; events: number; errors: number }): Promise<void> {
    await until(
      () =>
        counts().events === 1 &&
        counts().errors === 1 &&
        events().state('events') === 'connected' &&
        events().state('errors') === 'connected',
      'one socket per channel, connected',
      20_000,
    );
    assert.equal(events().listenerCount('state'), listeners.state, 'state listeners');
    assert.equal(events().channels.events.listeners.size, listeners.events, 'events listeners');
    assert.equal(events().channels.errors.listeners.size, listeners.errors, 'errors listeners');
  }

  async function redeploys(rng: Rng, n: number, seen: string[]): Promise<void> {
    for (let d = 1; d <= n; d++) {
      await new Promise((resolve) => setTimeout(resolve, rng.int(0, 250)));
      const f = flow(sim, d);
      await helper.setFlows(f.nodes, 'nodes', f.credentials);
      sample(seen, `redeploy ${d}`);
    }
  }

  it('four nodes share one socket per channel; redeploys while every socket closes at once leave one each', async function () {
    const rng = new Rng(SEED);
    const f = flow(sim, 0);
    await loadFlow(f.nodes, f.credentials);
    await until(() => counts().events === 1 && counts().errors === 1, 'both sockets', 10_000);
    const listeners = {
      state: events().listenerCount('state'),
      events: events().channels.events.listeners.size,
      errors: events().channels.errors.listeners.size,
    };
    assert.deepEqual(counts(), { events: 1, errors: 1 }, 'one socket per channel for two lh-events and two lh-error-polls');
    const seen: string[] = [];
    sim.setSocketsCloseAtOnce(true);
    await redeploys(rng, 8, seen);
    sim.setSocketsCloseAtOnce(false);
    // the first reconnect after the last early close waits out the back-off (3 s ±20 %, or 6 s after three)
    await settledOnOneEach(listeners);
    assert.deepEqual(seen, [], `seed ${SEED}`);
    await helper.unload();
    await until(() => counts().events === 0 && counts().errors === 0, 'no socket once the flow stopped', 5000);
  });

  it('redeploys while the instrument restarts (attempts refused) leave one socket each, reopened soon after', async function () {
    const rng = new Rng(SEED + 1);
    const f = flow(sim, 0);
    await loadFlow(f.nodes, f.credentials);
    await until(() => counts().events === 1 && counts().errors === 1, 'both sockets', 10_000);
    const listeners = {
      state: events().listenerCount('state'),
      events: events().channels.events.listeners.size,
      errors: events().channels.errors.listeners.size,
    };
    const seen: string[] = [];
    const restarted = sim.restart(2500);
    await redeploys(rng, 5, seen);
    await restarted;
    const back = Date.now();
    await settledOnOneEach(listeners);
    // attempts that found nobody wait 3 s at most (+20 %): both sockets are back within that of the restart
    assert.ok(Date.now() - back < 3600 + 1500, `back ${Date.now() - back} ms after the instrument`);
    assert.deepEqual(seen, [], `seed ${SEED}`);
    await helper.unload();
    await until(() => counts().events === 0 && counts().errors === 0, 'no socket once the flow stopped', 5000);
  });
});
