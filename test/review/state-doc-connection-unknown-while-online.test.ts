/**
 * Review finding: the state document's `connection.state` is `unknown` only while "nothing is heard yet" (README,
 * Watching a lab), but the watch published the connection to the lab only on a change it reports as a msg (offline,
 * then online again). An instrument that answered every poll from the start stayed `unknown` in the document, and
 * `lh_instrument_up` had no series at all, for as long as it never went offline; after a lease came back to this
 * Node-RED the document said `unknown` again for good. A poll that finds the instrument online now says so to the lab.
 */
import assert from 'node:assert/strict';

import type { LabEvent } from '../../src/observe/lab-events';
import { fold, newMemory, type StateMemory } from '../../src/observe/state-document';
import { bServerFlow, pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow } from '../support/runtime';

/** The runtime loads the built package (nodes/): its lab events are that module's. */

const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

describe('review: the state document of an instrument that is online from the start', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('says online after the first polls, and a lease coming back is followed by online again', async function () {
    let memory: StateMemory = newMemory('sim', 0);
    const stop = built.onLabEvent((e: LabEvent) => {
      memory = fold(memory, e, Date.now());
    });
    try {
      const server = bServerFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [[], [], []] },
        ],
        server.credentials,
      );
      await pollsDone(sim, 2);
      assert.equal(memory.doc.connection.state, 'online');
      const instrumentKey = (helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey;
      built.publishLab({ instrumentKey, instrument: 'sim', kind: 'lease', holder: false });
      built.publishLab({ instrumentKey, instrument: 'sim', kind: 'lease', holder: true });
      assert.equal(memory.doc.connection.state, 'unknown');
      await pollsDone(sim, 2);
      assert.equal(memory.doc.connection.state, 'online');
    } finally {
      stop();
    }
  });
});
