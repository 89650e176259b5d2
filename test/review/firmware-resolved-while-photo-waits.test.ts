/**
 * A firmware error's msgs in the order the instrument said them. Its raised msg waits (up to 2 s) for the deck photo;
 * the frames of the socket are not awaited by the poll loop, so a resolution pushed meanwhile went out first: a
 * resolved msg, then the raised msg of the same error (a flow keeping pending errors would keep it for ever).
 * Coordinated, the two frames' msgs each wait for Redis, and the resolution could reach the shared memory before the
 * raise: refused there, no resolved msg at all. Each change's msgs now go out after the change before it.
 */
import assert from 'node:assert/strict';

import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { firmwareFrame } from './firmware-id-reuse.support';

type Msg = Record<string, unknown>;

function suite(coordinated: boolean): void {
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = coordinated ? useRedis() : undefined;

  it(`raised first, then resolved${coordinated ? ' (coordinated)' : ''}`, async function () {
    const server = bServerFlow(sim, { withB: false, config: db ? { coordination: 'coord' } : {} });
    const coord = db
      ? [{ id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix: `fw-order-${process.pid}`, leaseSeconds: 5 }]
      : [];
    await loadFlow(
      [...coord, ...server.nodes, pollNode([['out'], ['out'], []], { interval: 60 }), { id: 'out', type: 'helper' }],
      server.credentials,
    );
    const said: string[] = [];
    helper.getNode('out').on('input', (m: Msg) => said.push(`${String(m.event)} ${String(m.errorId)}`));
    await until(() => sim.eventSocketInfo.counts.errors > 0 && sim.requests.length > 0, 'the socket and the first poll', 20000);
    const camera = (): boolean => sim.requests.some((r) => r.path.startsWith('/api/v1/camera/'));
    sim.setFaults({ latencyMs: 600 }); // the camera (every request) takes 0.6 s
    await until(
      () => {
        if (!camera()) sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-1', title: 'Pressure fault', source: 'Firmware' }));
        return camera();
      },
      'the photo of the raised error asked',
      20000,
    );
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-1', resolved: true })); // while the raised msg waits for its photo
    await until(() => said.length >= 2, 'both msgs', 20000);
    sim.setFaults({});
    assert.deepEqual(said, ['raised fw-1', 'resolved fw-1']);
  });
}

describe('review: a firmware error resolved while its raised msg waits for the photo', function () {
  this.timeout(60000);
  suite(false);
});

describeWithRedis('review: a firmware error resolved while its raised msg waits (coordinated)', function () {
  this.timeout(60000);
  suite(true);
});
