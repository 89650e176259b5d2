/**
 * Issue 33 in a real Node-RED runtime: a raised error carries a deck photo by default (msg.snapshot, msg.attachments);
 * an instrument without a camera, or a camera answering something that is not an image, never stops the msg, which
 * says why; the option off asks the camera nothing.
 */
import assert from 'node:assert/strict';
import http from 'http';
import path from 'path';

import { imageType } from '../../src/client';
import { restartMemory } from '../support/homes';
import { closeLocal, listenLocal } from '../support/local-server';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';
import { until } from '../support/until';
import { stopRecording } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type Permits = { acquire(): Promise<() => void>; inFlight: number; waiting: number };

/** The cap on polls in flight of the built nodes Node-RED loaded (one module, shared by every poll loop). */
function builtPermits(): { pollPermits: Permits; MAX_POLLS_IN_FLIGHT: number } {
  return require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'shared', 'poll-permits.js')) as {
    pollPermits: Permits;
    MAX_POLLS_IN_FLIGHT: number;
  };
}

describe('lh-error-poll: deck photo with each raised error', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      restartMemory();
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

  it('two lh-server nodes of one instrument share its camera: one error, one photo, both msgs carry it', async function () {
    const one = serverFlow(sim, { withB: false });
    const two = serverFlow(sim, { withB: false, id: 'server2' });
    const poll = (id: string, server: string, out: string): Msg => ({
      id,
      type: 'lh-error-poll',
      server,
      source: 'A',
      interval: 0.5,
      wires: [[out], [], []],
    });
    await loadFlow(
      [
        ...one.nodes,
        ...two.nodes,
        poll('poll1', 'server', 'raised1'),
        poll('poll2', 'server2', 'raised2'),
        { id: 'raised1', type: 'helper' },
        { id: 'raised2', type: 'helper' },
      ],
      { ...one.credentials, ...two.credentials },
    );
    const both = Promise.all([nextMessage(helper.getNode('raised1')), nextMessage(helper.getNode('raised2'))]);
    sim.injectPendingError({ title: 'Clot detected', message: 'channel 1' });
    const msgs = await both;
    for (const msg of msgs) assert.equal((msg.snapshot as Msg | undefined)?.contentType, 'image/png', String(msg.snapshotError));
    assert.equal(cameraRequests(), 1, 'one photo per instrument per 10 s, whichever lh-server node asks');
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

  it('a camera that never answers: the msg goes out with snapshotError (the 2 s bound), the camera still held', async function () {
    // a proxy in front of the simulator that holds every camera request and passes everything else
    const held: http.ServerResponse[] = [];
    const proxy = http.createServer((req, res) => {
      if (req.url?.includes('/api/v1/camera/')) return void held.push(res);
      const upstream = http.request(`${sim.baseUrl}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    const url = await listenLocal(proxy);
    try {
      const server = serverFlow(sim, { withB: false, config: { baseUrl: url } });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
          { id: 'raised', type: 'helper' },
        ],
        server.credentials,
      );
      const got = nextMessage(helper.getNode('raised'));
      sim.injectPendingError({ title: 'Arm collision' });
      const msg = await got;
      assert.equal(held.length, 1, 'the camera was asked and has not answered');
      assert.equal(msg.snapshot, undefined);
      assert.match(String(msg.snapshotError), /did not answer within 2 s/);
      assert.equal((msg.payload as Msg).title, 'Arm collision');
    } finally {
      await helper.unload();
      await closeLocal(proxy);
    }
  });

  /** Loads a listening poll node (60 s interval) and waits until its socket is open and no poll is in flight. */
  async function livePoll(poll: Msg = {}): Promise<{ polls: () => number; permits: ReturnType<typeof builtPermits> }> {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, wires: [['raised'], [], []], ...poll },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
    const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    const permits = builtPermits();
    await until(
      () => sim.eventSocketInfo.counts.errors === 1 && polls() >= 1 && permits.pollPermits.inFlight === 0,
      'live',
      20000,
    );
    return { polls, permits };
  }

  it('a pushed error: the photo is asked at the frame, before its poll is answered (issue 31), and the msg gets it', async function () {
    await livePoll();
    // every request answered 1 s after it came: the poll stays unanswered while the camera is asked, and the photo
    // still comes well within its 2 s (a busy machine adds to both)
    sim.setFaults({ latencyMs: 1000 });
    const got = nextMessage(helper.getNode('raised'));
    try {
      const mark = sim.requests.length; // a poll already under way (the one on connect) is not the error's
      sim.injectPendingError({ title: 'Arm collision' });
      await until(() => cameraRequests() === 1, 'the camera asked at the frame', 20000);
      const since = sim.requests.slice(mark).filter((r) => r.path === '/api/v1/errors/check-for-pending-errors');
      assert.ok(
        since.every((r) => r.status === 0),
        'no poll answered yet: the photo did not wait for the answer (before, it was asked after it)',
      );
    } finally {
      sim.clearFaults();
    }
    const msg = await got;
    assert.equal((msg.payload as Msg).title, 'Arm collision');
    assert.equal((msg.snapshot as Msg).contentType, 'image/png');
    assert.equal(cameraRequests(), 1, 'the photo taken at the frame, not a second one');
  });

  it('a pushed error: its poll goes to the instrument before the camera is asked (the answer that raises it comes first)', async function () {
    await livePoll();
    for (let i = 0; i < 3; i++) {
      const mark = sim.requests.length;
      const got = nextMessage(helper.getNode('raised'));
      const error = sim.injectPendingError({ title: `Arm collision ${i}` });
      const msg = await got;
      const paths = sim.requests.slice(mark).map((r) => r.path);
      const poll = paths.indexOf('/api/v1/errors/check-for-pending-errors');
      const camera = paths.findIndex((p) => p.startsWith('/api/v1/camera/'));
      if (i === 0) {
        assert.ok(camera >= 0, `the camera asked for the pushed error: ${paths.join(', ')}`);
        assert.ok(poll >= 0 && poll < camera, `the poll before the camera: ${paths.join(', ')}`);
        assert.equal((msg.snapshot as Msg).contentType, 'image/png');
      }
      sim.resolvePendingError(error.id);
    }
  });

  it('camera requests are capped process-wide: beyond the cap the msg goes on at once without a photo, polls unaffected', async function () {
    await livePoll();
    const deck = require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'deck', 'snapshot.js')) as {
      photoPermits: Permits;
      MAX_PHOTOS_IN_FLIGHT: number;
    };
    const held = await Promise.all(Array.from({ length: deck.MAX_PHOTOS_IN_FLIGHT }, () => deck.photoPermits.acquire()));
    try {
      const got = nextMessage(helper.getNode('raised'));
      sim.injectPendingError({ title: 'Arm collision' });
      const msg = await got;
      assert.match(String(msg.snapshotError), /no photo taken: this Node-RED was busy/);
      assert.equal(cameraRequests(), 0);
    } finally {
      for (const release of held) release();
    }
  });

  it('a pushed error while every permit is out (a burst): no photo ahead, which would add to the burst; one after the poll', async function () {
    const { permits } = await livePoll();
    const { pollPermits, MAX_POLLS_IN_FLIGHT } = permits;
    const held = await Promise.all(Array.from({ length: MAX_POLLS_IN_FLIGHT }, () => pollPermits.acquire()));
    const got = nextMessage(helper.getNode('raised'));
    try {
      sim.injectPendingError({ title: 'Arm collision' });
      await until(() => pollPermits.waiting >= 1, "the error's poll waiting for a permit", 20000);
      assert.equal(cameraRequests(), 0, 'no photo while the burst holds every permit');
    } finally {
      for (const release of held) release();
    }
    const msg = await got;
    assert.equal((msg.snapshot as Msg).contentType, 'image/png', 'the photo taken after the answer, as before');
    assert.equal(cameraRequests(), 1);
  });

  it('raised while polls wait for permits (a burst across the fleet): the msg goes on at once without a photo, saying why', async function () {
    const { permits } = await livePoll();
    const { pollPermits, MAX_POLLS_IN_FLIGHT } = permits;
    const held = await Promise.all(Array.from({ length: MAX_POLLS_IN_FLIGHT }, () => pollPermits.acquire()));
    const got = nextMessage(helper.getNode('raised'));
    let behind: Promise<() => void> | undefined;
    try {
      sim.injectPendingError({ title: 'Arm collision' });
      await until(() => pollPermits.waiting >= 1, "the error's poll waiting for a permit", 20000);
      behind = pollPermits.acquire(); // another poll of the burst, waiting behind the error's
      held.pop()?.(); // one permit back: it goes to the error's poll; the other still waits
      const msg = await got;
      assert.equal((msg.payload as Msg).title, 'Arm collision');
      assert.equal(msg.snapshot, undefined);
      assert.match(String(msg.snapshotError), /no photo taken: this Node-RED was busy/);
      assert.equal(cameraRequests(), 0, 'no camera request added to the burst');
    } finally {
      for (const release of held) release();
      if (behind) (await behind)();
    }
  });

  it('a pushed error the node does not report (below the minimum severity): no photo asked ahead', async function () {
    const { polls, permits } = await livePoll({ minSeverity: 'Fatal' });
    const before = polls();
    sim.injectPendingError({ title: 'Tip lost', severity: 'Warning' });
    // the frame's poll has answered (a photo ahead would have been asked before it went out)
    await until(() => polls() > before && permits.pollPermits.inFlight === 0, 'the poll the frame triggers', 20000);
    assert.equal(cameraRequests(), 0, 'no photo for an error the node does not report');
  });

  it('option off: no photo, the camera is never asked', async function () {
    sim.injectPendingError({ title: 'Arm collision' });
    const msg = await raised({ snapshot: false });
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.snapshotError, undefined);
    assert.equal(cameraRequests(), 0);
  });
});
