/**
 * Issue 33 in a real Node-RED runtime: a raised error carries a deck photo by default (msg.snapshot, msg.attachments);
 * an instrument without a camera, or a camera answering something that is not an image, never stops the msg, which
 * says why; the option off asks the camera nothing.
 */
import assert from 'node:assert/strict';

import { imageType } from '../../src/client';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';
import { seenErrors, stopRecording } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('lh-error-poll: deck photo with each raised error', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      seenErrors.forgetAllWatches();
    },
  });

  async function raised(poll: Msg = {}): Promise<Msg> {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []], ...poll },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
    return nextMessage(helper.getNode('raised'));
  }

  const cameraRequests = (): number => sim.requests.filter((r) => r.path.startsWith('/api/v1/camera/')).length;

  it('by default (a flow saved without the option): msg.snapshot is the deck PNG and msg.attachments carries it', async function () {
    sim.injectPendingError({ title: 'Liquid level not detected', message: 'channel 3, plate P2 well B4' });
    const msg = await raised();
    const snap = msg.snapshot as Msg;
    assert.equal(snap.contentType, 'image/png');
    assert.equal(imageType(snap.content as Buffer), 'image/png');
    assert.ok(!Number.isNaN(Date.parse(String(snap.takenAt))));
    const [attachment] = msg.attachments as Msg[];
    assert.equal(attachment.contentType, 'image/png');
    assert.match(String(attachment.filename), /^deck-.+\.png$/);
    assert.equal(attachment.content, snap.content);
    assert.equal(msg.snapshotError, undefined);
    assert.equal(msg.event, 'raised');
  });

  it('an instrument without a camera: the msg goes on with snapshotError, no photo', async function () {
    sim.configureDeck({ camera: false });
    sim.injectPendingError({ title: 'Arm collision' });
    const msg = await raised();
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.attachments, undefined);
    assert.match(String(msg.snapshotError), /no camera/);
  });

  it('a camera answering something that is not an image: refused, the msg says so', async function () {
    sim.configureDeck({ cameraNotImage: true });
    sim.injectPendingError({ title: 'Arm collision' });
    const msg = await raised();
    assert.equal(msg.snapshot, undefined);
    assert.match(String(msg.snapshotError), /not an image/);
  });

  it('option off: no photo, the camera is never asked', async function () {
    sim.injectPendingError({ title: 'Arm collision' });
    const msg = await raised({ snapshot: false });
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.snapshotError, undefined);
    assert.equal(cameraRequests(), 0);
  });
});
