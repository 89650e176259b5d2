/**
 * Review finding (review13): coordinated, the holder's first poll under a lease sweeps the shared memory and resolves
 * what the instrument no longer lists. The instrument never lists firmware errors (they come on the frame socket), so
 * a firmware error raised from a frame before that first poll is resolved by it: lh-error-poll sends a resolved msg for
 * an error still open (its own memory keeps it, and so does the state document, from the poll's list). The frame that
 * does resolve it later finds nothing in the shared memory: no resolved msg then, and no lab event.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { coordinatedWatch, firmwareFrame } from './firmware-id-reuse.support';

type Msg = Record<string, unknown>;

describeWithRedis('review: a firmware error raised before the holder’s first poll is not resolved by its sweep', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();

  it('no resolved msg for an open firmware error', async function () {
    const flow = coordinatedWatch(sim, db.harness.url, `fw-swept-${process.pid}`);
    await loadFlow(flow.nodes, flow.credentials);
    const raised: Msg[] = [];
    const resolved: Msg[] = [];
    const documents: number[] = [];
    helper.getNode('raised').on('input', (m: Msg) => raised.push(m));
    helper.getNode('resolved').on('input', (m: Msg) => resolved.push(m));
    helper
      .getNode('docs')
      .on('input', (m: { payload: { errors: { pending: number } } }) => documents.push(m.payload.errors.pending));
    const frame = firmwareFrame({ id: 'fw-1', title: 'Pressure fault', severity: 'Error', source: 'Firmware' });
    // as early as the holder's watch takes frames: before its first poll's sweep
    await until(
      () => {
        if (sim.eventSocketInfo.counts.errors > 0) sim.publishRawFrame('errors', frame);
        return raised.length > 0;
      },
      'the firmware error raised',
      20000,
    );
    const polled = documents.length;
    await until(() => documents.length > polled || resolved.length > 0, 'a poll after the raise', 20000);
    await new Promise((r) => setTimeout(r, 1500)); // several polls more
    assert.deepEqual(
      resolved.map((m) => m.errorId),
      [],
      'the firmware error is still open on the instrument (no frame resolved it)',
    );
  });
});
