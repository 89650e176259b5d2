/**
 * Review finding (review13), end to end: coordinated, error-watch tells a change through the error gate, one event per
 * Redis round trip (marked `more`, then 'settled'). A lab event that lands in that round trip (here a run's progress,
 * published from the check phase right after the change's first event, as run-watch or a machine read would) made
 * lh-state send the document half way: the old firmware error resolved, the new one not yet raised, none listed.
 */

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';
import { loadStateDocuments, reuseFirmwareId } from './firmware-id-reuse.support';

// the runtime loads the built nodes: their lab events, not src's
const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

describeWithRedis('review: coordinated, a lab event between two events of a change shows no step between', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('each document lists the old error or the new one, never none', async function () {
    const prefix = `lh-state-mid-change-${process.pid}`;
    const coord = { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 2 };
    const documents = await loadStateDocuments(sim, [coord], { coordination: 'coord' });
    const instrumentKey = `${sim.baseUrl}|`;
    let progress = 0;
    let mores = 0;
    stop = built.onLabEvent((event) => {
      if (event.instrumentKey !== instrumentKey || event.kind !== 'resolved' || !event.more) return;
      mores++;
      // a run's progress during the round trip to Redis that lies between this event and the change's next one
      setImmediate(() =>
        built.publishLab({ instrumentKey, instrument: '', kind: 'run', state: 'Running', progress: ++progress / 10 }),
      );
    });
    await until(() => sim.eventSocketInfo.counts.errors === 1, 'the errors socket', 20000);
    // the holder's first poll (its sweep) is in: the first document
    await until(() => documents.length > 0, 'the first document', 20000);
    await reuseFirmwareId(sim, documents);
    // the document can list the last error from the poll's list (told first) before the gate passed its change: the
    // change's events follow, one Redis round trip each
    await until(() => mores >= 3, `the gate path marks the change's events (${mores})`, 20000);
  });
});
