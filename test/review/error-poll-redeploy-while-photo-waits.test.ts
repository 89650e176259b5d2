/**
 * A deploy while a raised error's msg waits (up to 2 s) for its deck photo. The poll had already taken the error into
 * the node's memory (and saved it) before the wait: the msg then left the closed node into a flow Node-RED had
 * stopped (a full deploy) and was dropped, and the new node, finding the error in the memory, never raised it again.
 * The notification of that error was lost for good. Now what the node could not send before it closed (a poll's raised
 * and resolved msgs, coordinated each msg the gate passed) is handed to its next instance, which sends it first, once.
 */
import assert from 'node:assert/strict';

import { pollNode, recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { useHeldCamera } from '../support/camera-proxy';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-error-poll: a deploy while a raised msg waits for its photo', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      restartMemory();
    },
  });
  const camera = useHeldCamera(sim);

  const flow = (name: string): ReturnType<typeof serverFlow> => {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: camera.url } });
    return {
      nodes: [
        ...server.nodes,
        pollNode([['raised'], ['resolved'], []], { name, interval: 0.3 }),
        { id: 'raised', type: 'helper', name },
        { id: 'resolved', type: 'helper', name },
      ],
      credentials: server.credentials,
    };
  };

  for (const deploy of ['full', 'flows', 'nodes'] as const) {
    it(`a ${deploy} deploy: the error is raised once all the same`, async function () {
      const raised = recordDeliveries('raised');
      const first = flow('one');
      await loadFlow(first.nodes, first.credentials);
      await until(() => sim.requests.some((r) => r.path === '/api/v1/errors/check-for-pending-errors'), 'first poll', 10000);
      const error = sim.injectPendingError({ title: 'Arm collision' });
      await until(() => camera.held.length === 1, 'the camera asked for the raised error', 10000);
      camera.hold = false; // the next camera request (the new node's, if any) is answered
      const next = flow('two');
      await helper.setFlows(next.nodes, deploy, next.credentials);
      await until(() => raised.length > 0, 'the error raised', 10000).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 3000)); // the old node's 2 s wait has passed
      assert.deepEqual(
        raised.map((m: Msg) => m.errorId),
        [error.id],
        'the error raised exactly once across the deploy',
      );
    });
  }

  it('a full deploy while one poll resolves an error and raises another: both msgs go out once, in order', async function () {
    const raised = recordDeliveries('raised');
    const resolved = recordDeliveries('resolved');
    const first = flow('one');
    await loadFlow(first.nodes, first.credentials);
    const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    await until(() => polls() > 0, 'first poll', 10000);
    // Y raised without its photo (the camera held past the 2 s wait)
    const y = sim.injectPendingError({ title: 'Door open' });
    await until(() => raised.length === 1, 'Y raised', 10000);
    // one poll resolves Y and raises X, whose msg waits for the photo (the camera still held): the deploy comes then
    const before = polls();
    sim.resolvePendingError(y.id);
    const x = sim.injectPendingError({ title: 'Arm collision' });
    await until(() => polls() > before, 'the poll that sees both', 10000);
    await new Promise((r) => setTimeout(r, 500)); // its answer in: X's msg waits for the photo (up to 2 s)
    const next = flow('two');
    await helper.setFlows(next.nodes, 'full', next.credentials);
    camera.hold = false;
    await until(() => raised.length === 2 && resolved.length === 1, 'X raised and Y resolved', 10000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000)); // nothing more comes
    assert.deepEqual(
      raised.map((m: Msg) => m.errorId),
      [y.id, x.id],
    );
    assert.deepEqual(
      resolved.map((m: Msg) => m.errorId),
      [y.id],
    );
  });
});
