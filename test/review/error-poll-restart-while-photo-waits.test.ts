/**
 * Review (review37). Node-RED stopped (or restarted) while a poll's msgs wait (up to 2 s) for a deck photo. The poll
 * took its errors into the memory, and *Remember* saved it, before the wait; a close meanwhile hands the msgs to the
 * node's next instance (d940775), in memory only. A redeploy has that next instance; a stop has none: the msgs went
 * with the process, and the saved memory, read back at the next start, said they had been sent. The error raised and
 * the error resolved in that poll were never reported (review35 had taken the raise back out of the saved memory;
 * d940775 dropped that). README: "Nothing lost, nothing twice ... also across redeploys and restarts (*Remember*)".
 * What a saved memory says now leaves out what waits unsent: a restart reports those errors again from the
 * instrument's list; a redeploy still sends the msgs handed over, once.
 */
import assert from 'node:assert/strict';

import { loadContextStores, pollNode, recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { useHeldCamera } from '../support/camera-proxy';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: lh-error-poll, Node-RED restarted while a poll waits for its photo', function () {
  this.timeout(40000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      restartMemory();
    },
  });
  const camera = useHeldCamera(sim);

  /** on a tab, as in a real flows.json (Node-RED cleans the context of nodes it does not find on a flow) */
  const flow = (): ReturnType<typeof serverFlow> => {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: camera.url } });
    return {
      nodes: [
        { id: 'tab', type: 'tab', label: 'errors' },
        ...server.nodes,
        { ...pollNode([['raised'], ['resolved'], []], { interval: 0.3, persist: true, store: 'keep' }), z: 'tab' },
        { id: 'raised', type: 'helper', z: 'tab' },
        { id: 'resolved', type: 'helper', z: 'tab' },
      ],
      credentials: server.credentials,
    };
  };
  const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;

  for (const restart of [true, false]) {
    it(`${restart ? 'a restart' : 'a full deploy'} while one poll resolves Y and raises X: each reported once`, async function () {
      // a persistent context store, as a restart-proof setup has (the helper loads none: load, then deploy again)
      runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
      const f = flow();
      await loadFlow(f.nodes, f.credentials);
      await loadContextStores();
      restartMemory();
      await helper.setFlows(f.nodes, 'full', f.credentials);
      const raised = recordDeliveries('raised');
      const resolved = recordDeliveries('resolved');
      await until(() => polls() > 0, 'first poll', 10000);
      // Y raised without its photo (the camera held past the 2 s wait)
      const y = sim.injectPendingError({ title: 'Door open' });
      await until(() => raised.length === 1, 'Y raised', 10000);
      // one poll resolves Y and raises X, whose msg waits for its photo: Node-RED stops then
      const before = polls();
      sim.resolvePendingError(y.id);
      const x = sim.injectPendingError({ title: 'Arm collision' });
      await until(() => polls() > before, 'the poll that sees both', 10000);
      await new Promise((r) => setTimeout(r, 500)); // its answer in: the msgs wait for X's photo
      if (restart) restartMemory(); // the next start is another process: nothing of this one's memory but the store
      camera.hold = false;
      await helper.setFlows(f.nodes, 'full', f.credentials);
      await until(() => raised.length === 2 && resolved.length === 1, 'X raised and Y resolved', 10000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1000)); // nothing more comes
      assert.deepEqual(
        raised.map((m: Msg) => m.errorId),
        [y.id, x.id],
        'X raised once',
      );
      assert.deepEqual(
        resolved.map((m: Msg) => m.errorId),
        [y.id],
        'Y resolved once',
      );
    });
  }
});
