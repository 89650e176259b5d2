/**
 * Review finding (review11's open item): one change told in two lab events let lh-state send the step between. A
 * firmware frame that reuses the id of an open firmware error resolves the old one and raises the new one; a document
 * lh-state's rate let out after the first event listed neither (with coordination a Redis round trip lies between the
 * two). Events of one change are now marked `more` until the last (or a 'settled'), and the document waits for it.
 */
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { until } from '../support/until';
import { loadStateDocuments, reuseFirmwareId } from './firmware-id-reuse.support';

describe('review: a firmware id reused never shows the step between in the state document', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('each document lists the old error or the new one, never none', async function () {
    const documents = await loadStateDocuments(sim);
    await until(() => sim.eventSocketInfo.counts.errors === 1, 'the errors socket', 10000);
    await reuseFirmwareId(sim, documents);
  });
});
