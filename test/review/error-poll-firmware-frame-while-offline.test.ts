/**
 * Review 101 (issue 31's frames that ask for no poll), in a real Node-RED runtime on the simulator: while the
 * instrument's last poll went unanswered (offline, polls backing off up to 60 s), a frame on its errors socket is the
 * first sign that it is back. A firmware frame settles its error by itself and asks for no poll, so the node stayed
 * offline (its status, the lab's state document and output 3) until the backed-off poll; every frame polled at once
 * before. A frame while the last poll went unanswered still polls: `online` follows the frame.
 */
import assert from 'node:assert/strict';

import { liveWatch, messageWhere } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review 101: a firmware frame while the error poll is offline', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('polls, and online follows the frame instead of the backed-off poll', async function () {
    const { connection } = await liveWatch(sim, { interval: 60, offlineAfter: 1 });
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    try {
      helper.getNode('poll').receive({}); // a poll now: unanswered
      await messageWhere('connection', (m) => (m.payload as Msg).state === 'offline', 15_000);
    } finally {
      sim.clearFaults();
    }
    const fw = sim.raiseFirmwareError({ title: 'Pressure fault' });
    await messageWhere('raised', (m) => m.errorId === fw.id, 15_000);
    await messageWhere('connection', (m) => (m.payload as Msg).state === 'online', 15_000).catch((err: Error) => {
      throw new Error(
        `online after the frame: ${err.message} (said: ${connection.map((m) => String((m.payload as Msg).state)).join(', ')})`,
      );
    });
    assert.deepEqual(
      connection.map((m) => (m.payload as Msg).state),
      ['offline', 'online'],
    );
  });
});
