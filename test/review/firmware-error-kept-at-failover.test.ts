/**
 * Left by review13: coordinated, a replica that takes an instrument over never heard the frames of the firmware errors
 * the earlier holder raised (a standby ignores the socket), and the instrument never lists them. Its first poll's
 * sweep resolved what the shared memory held and the list did not show: a resolved msg for a firmware error still
 * waiting on the instrument, and the frame that does resolve it later found nothing. Now the new holder adopts them
 * before its sweep: they stay open, in its state document too, and their resolution frame resolves them.
 *
 * The failover, in one process: the flow that raised the error is taken down (its lease let go), the memory of every
 * instrument home emptied (a process that never saw it) and the same flow deployed again, as the next replica.
 */
import assert from 'node:assert/strict';

import { recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { coordinatedWatch, firmwareFrame } from './firmware-id-reuse.support';

type Msg = Record<string, unknown>;

describeWithRedis('review: a firmware error raised by an earlier holder stays open at the next one', function () {
  this.timeout(60000);
  const sim = useInstrument({
    afterEach: () => {
      stopRecording();
      restartMemory();
    },
  });
  const db = useRedis();

  it('no resolved msg at the takeover; its resolution frame resolves it there', async function () {
    const prefix = `fw-failover-${process.pid}`;
    const { nodes: flow, credentials } = coordinatedWatch(sim, db.harness.url, prefix);
    const raised = recordDeliveries('raised');
    const resolved = recordDeliveries('resolved');
    const documents = recordDeliveries('docs');
    const count = (m: Msg): number => (m.payload as { errors: { pending: number } }).errors.pending;

    await loadFlow(flow, credentials);
    await until(
      () => {
        if (sim.eventSocketInfo.counts.errors > 0)
          sim.publishRawFrame(
            'errors',
            firmwareFrame({ id: 'fw-1', title: 'Pressure fault', severity: 'Error', source: 'Firmware' }),
          );
        return raised.length > 0;
      },
      'the firmware error raised by the first holder',
      20000,
    );
    await helper.unload(); // the first holder goes (its lease let go, or run out)
    restartMemory(); // the next replica never saw the frame
    const before = { raised: raised.length, documents: documents.length };

    await loadFlow(flow, credentials);
    await until(() => documents.length > before.documents, "the new holder's first poll", 20000);
    await new Promise((r) => setTimeout(r, 1500)); // several polls more (every 0.3 s)
    assert.deepEqual(
      resolved.map((m) => m.errorId),
      [],
      'the firmware error is still open on the instrument: no resolved msg at the takeover',
    );
    assert.equal(raised.length, before.raised, 'not raised again: it went out from the first holder');
    assert.equal(count(documents[documents.length - 1]), 1, "the new holder's state document lists it");

    // the instrument resolves it: the new holder reports it
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-1', resolved: true }));
    await until(() => resolved.length > 0, 'the resolution reported by the new holder', 20000);
    assert.deepEqual(
      resolved.map((m) => m.errorId),
      ['fw-1'],
    );
    await until(() => count(documents[documents.length - 1]) === 0, 'the state document without it', 20000);
  });
});
