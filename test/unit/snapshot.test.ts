/**
 * Issue 33: a slow or missing camera never delays a notification by more than 2 s nor stops it. Fake clock: a camera
 * that hangs for 30 s, one that refuses, one without a camera; the rate limit per instrument.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

type InstalledClock = ReturnType<typeof FakeTimers.install>;

import { LhError, type LiquidHandlerClient, type Snapshot } from '../../src/client';
import {
  BUSY_REASON,
  NO_CAMERA_RETRY_MS,
  SNAPSHOT_MIN_INTERVAL_MS,
  SNAPSHOT_WAIT_MS,
  snapshotHook,
  snapshotMsgFields,
  SnapshotTaker,
  snapshotTaker,
} from '../../src/nodes/deck/snapshot';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

function photo(): Snapshot {
  return { contentType: 'image/png', content: PNG, takenAt: new Date().toISOString() };
}

/** A camera answering after `ms` (fake time), counting its calls. */
function camera(ms: number, answer: () => Snapshot = photo): { calls: number; capture: () => Promise<Snapshot> } {
  const c = {
    calls: 0,
    capture: () => {
      c.calls++;
      return new Promise<Snapshot>((resolve) => setTimeout(() => resolve(answer()), ms));
    },
  };
  return c;
}

describe('snapshots with raised errors: bounded, rate-limited, never stopping a notification', function () {
  let clock: InstalledClock;
  beforeEach(function () {
    clock = FakeTimers.install({ now: Date.parse('2026-11-28T01:00:00Z') });
  });
  afterEach(function () {
    clock.uninstall();
  });

  it('a camera that hangs for 30 s: the msg goes on at 2 s with snapshotError, no photo', async function () {
    const cam = camera(30_000);
    const warnings: string[] = [];
    const hook = snapshotHook(new SnapshotTaker(cam.capture), (w) => warnings.push(w));
    const msg: Record<string, unknown> = { topic: 'Liquid level not detected', errorId: 'e1' };
    let sentAt: number | undefined;
    const started = Date.now();
    void hook.attach([msg]).then(() => (sentAt = Date.now()));
    await clock.tickAsync(SNAPSHOT_WAIT_MS - 1);
    assert.equal(sentAt, undefined, 'not before the wait is over');
    await clock.tickAsync(1);
    assert.equal(sentAt, started + SNAPSHOT_WAIT_MS);
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.attachments, undefined);
    assert.match(String(msg.snapshotError), /did not answer within 2 s/);
    assert.equal(warnings.length, 1);
    await clock.tickAsync(30_000); // the late photo arrives: nothing breaks, the msg is not touched afterwards
    assert.equal(msg.snapshot, undefined);
  });

  it('a camera within 2 s: msg.snapshot and msg.attachments in node-red-node-email’s shape', async function () {
    const hook = snapshotHook(new SnapshotTaker(camera(500).capture), () => undefined);
    const msg: Record<string, unknown> = { errorId: 'e 1/2', attachments: [{ filename: 'log.txt', content: 'x' }] };
    const done = hook.attach([msg]);
    await clock.tickAsync(500);
    await done;
    const snap = msg.snapshot as Snapshot;
    assert.equal(snap.contentType, 'image/png');
    assert.ok(Buffer.isBuffer(snap.content));
    assert.equal(snap.takenAt, '2026-11-28T01:00:00.500Z');
    const attachments = msg.attachments as { filename: string; content: unknown; contentType?: string }[];
    assert.equal(attachments.length, 2, 'the attachments already there are kept');
    assert.deepEqual(attachments[1], {
      filename: 'deck-e_1_2-2026-11-28T01-00-00-500Z.png',
      content: PNG,
      contentType: 'image/png',
    });
    assert.equal(msg.snapshotError, undefined);
  });

  it('rate limit: errors raised within the interval share one photo; the camera is asked again after it', async function () {
    const cam = camera(100);
    const hook = snapshotHook(new SnapshotTaker(cam.capture), () => undefined);
    const a: Record<string, unknown> = {};
    const b: Record<string, unknown> = {};
    const both = Promise.all([hook.attach([a]), hook.attach([b])]); // together: one photo in flight, joined
    await clock.tickAsync(100);
    await both;
    assert.equal(cam.calls, 1);
    const c: Record<string, unknown> = {};
    await hook.attach([c]);
    assert.equal(cam.calls, 1, 'within the interval: the same photo');
    assert.equal(c.snapshot && (c.snapshot as Snapshot).takenAt, (a.snapshot as Snapshot).takenAt);
    await clock.tickAsync(SNAPSHOT_MIN_INTERVAL_MS);
    const d = hook.attach([{}]);
    await clock.tickAsync(100);
    await d;
    assert.equal(cam.calls, 2);
  });

  it('a photo is let go once its interval is over: the deck is not kept in memory past it (review35)', async function () {
    const cam = camera(100);
    const taker = new SnapshotTaker(cam.capture);
    const taken = taker.take();
    await clock.tickAsync(100);
    assert.ok('snapshot' in (await taken));
    assert.equal(taker.holdsPhoto, true, 'kept while it serves errors raised together');
    await clock.tickAsync(SNAPSHOT_MIN_INTERVAL_MS - 1);
    assert.equal(taker.holdsPhoto, true);
    await clock.tickAsync(1);
    assert.equal(taker.holdsPhoto, false, 'let go after the interval');
    const again = taker.take();
    await clock.tickAsync(100);
    assert.ok('snapshot' in (await again));
    assert.equal(cam.calls, 2, 'the next error gets a new photo');
  });

  /** Slots for photos ahead: `free` of them; counts those out. */
  let slots = { free: Infinity, out: 0 };
  const room = (): (() => void) | undefined => {
    if (slots.free <= slots.out) return undefined;
    slots.out++;
    let done = false;
    return () => {
      if (!done) slots.out--;
      done = true;
    };
  };
  beforeEach(function () {
    slots = { free: Infinity, out: 0 };
  });

  it('no room (a burst holds every permit): no photo ahead, and the msg goes on at once saying why, not warned', async function () {
    slots.free = 0;
    const cam = camera(100);
    const warned: string[] = [];
    const hook = snapshotHook(new SnapshotTaker(cam.capture), (t) => warned.push(t), room);
    hook.ahead();
    assert.equal(cam.calls, 0);
    const [msg] = await hook.attach([{} as Record<string, unknown>]); // no clock tick: at once
    assert.equal(cam.calls, 0);
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.snapshotError, BUSY_REASON);
    assert.deepEqual(warned, [], 'a burst is no camera fault: nothing in the log');
    slots.free = 1; // the burst is over: the next error gets its photo
    const next = hook.attach([{} as Record<string, unknown>]);
    await clock.tickAsync(100);
    const [later] = await next;
    assert.equal(cam.calls, 1);
    assert.ok(later.snapshot);
    assert.equal(slots.out, 0);
  });

  it('no room, but a recent photo or one under way: the msg still gets it (no new request)', async function () {
    const cam = camera(100);
    const hook = snapshotHook(new SnapshotTaker(cam.capture), () => undefined, room);
    hook.ahead(); // under way, holding a slot
    slots.free = 1; // the one slot is the photo's: no room for another
    const [a] = await Promise.all([hook.attach([{} as Record<string, unknown>]), clock.tickAsync(100)]).then(([m]) => m);
    assert.ok(a.snapshot, 'joined the photo under way');
    slots.free = 0;
    const [b] = await hook.attach([{} as Record<string, unknown>]);
    assert.ok(b.snapshot, 'the recent photo serves');
    assert.equal(cam.calls, 1);
  });

  it('a photo asked ahead (at the pushed frame) is the one the msg gets: its time overlaps the wait for the poll', async function () {
    const cam = camera(300);
    const hook = snapshotHook(new SnapshotTaker(cam.capture), () => undefined, room);
    hook.ahead();
    assert.equal(cam.calls, 1, 'the camera is asked at once');
    assert.equal(slots.out, 1, 'the photo holds a slot (a permit) while it is taken');
    hook.ahead(); // a second frame meanwhile: the photo under way serves it
    await clock.tickAsync(250); // the poll's wait and round trip
    const msg: Record<string, unknown> = {};
    const attached = hook.attach([msg]);
    await clock.tickAsync(50); // the photo lands 300 ms after the frame, 50 ms after the answer (not 300 ms after it)
    await attached;
    assert.equal(cam.calls, 1);
    assert.equal(slots.out, 0, 'every slot given back once the photo is done');
    assert.equal((msg.snapshot as Snapshot).contentType, 'image/png');
    await clock.tickAsync(1000);
    hook.ahead(); // within the interval: no new photo
    assert.equal(cam.calls, 1);
  });

  it('a photo asked ahead that fails rejects nothing; the msg says why; a hook without taker ignores it', async function () {
    const taker = new SnapshotTaker(() =>
      Promise.reject(new LhError('no camera', { kind: 'http', operation: 'snapshot', statusCode: 404 })),
    );
    const warned: string[] = [];
    const hook = snapshotHook(taker, (t) => warned.push(t), room);
    hook.ahead();
    await clock.tickAsync(0);
    const [msg] = await hook.attach([{} as Record<string, unknown>]);
    assert.match(String(msg.snapshotError), /no camera/);
    assert.equal(warned.length, 1);
    assert.equal(slots.out, 0, 'the slot given back after a failed photo');
    snapshotHook(undefined, () => undefined, room).ahead();
    assert.equal(slots.out, 0, 'snapshots off: no slot taken');
  });

  it('an instrument without a camera (404): said once, not asked again for a while, msgs go on at once', async function () {
    let calls = 0;
    const taker = new SnapshotTaker(() => {
      calls++;
      return Promise.reject(new LhError('not found', { kind: 'http', operation: 'snapshot', statusCode: 404 }));
    });
    const warnings: string[] = [];
    const hook = snapshotHook(taker, (w) => warnings.push(w));
    for (let i = 0; i < 5; i++) {
      const msg: Record<string, unknown> = {};
      await hook.attach([msg]);
      assert.match(String(msg.snapshotError), /has no camera/);
      await clock.tickAsync(SNAPSHOT_MIN_INTERVAL_MS);
    }
    assert.equal(calls, 1);
    assert.equal(warnings.length, 1);
    await clock.tickAsync(NO_CAMERA_RETRY_MS);
    await hook.attach([{}]);
    assert.equal(calls, 2);
  });

  it('an answer that is not an image is refused and said once; the msg says why', async function () {
    const taker = new SnapshotTaker(() =>
      Promise.reject(new LhError("snapshot: the camera's answer is not an image", { kind: 'response', operation: 'snapshot' })),
    );
    const warnings: string[] = [];
    const hook = snapshotHook(taker, (w) => warnings.push(w));
    for (let i = 0; i < 3; i++) {
      const msg: Record<string, unknown> = {};
      await hook.attach([msg]);
      assert.match(String(msg.snapshotError), /not an image/);
      await clock.tickAsync(SNAPSHOT_MIN_INTERVAL_MS);
    }
    assert.equal(warnings.length, 1);
  });

  it('no taker (snapshots off): msgs unchanged, at once', async function () {
    const msg = { topic: 't' };
    assert.deepEqual(await snapshotHook(undefined, () => undefined).attach([msg]), [{ topic: 't' }]);
  });

  it('the file name never carries a path or odd characters from the error id', function () {
    const f = snapshotMsgFields(photo(), '../../etc/passwd\u0000');
    const name = (f.attachments[0] as { filename: string }).filename;
    assert.ok(!/[/\\]/.test(name) && !name.includes('\u0000'), name);
  });
});

describe('the camera of one instrument, shared by its lh-server nodes (src/nodes/deck/snapshot.ts InstrumentCamera)', function () {
  let clock: InstalledClock;
  beforeEach(function () {
    clock = FakeTimers.install({ now: Date.parse('2026-11-28T01:00:00Z') });
  });
  afterEach(function () {
    clock.uninstall();
  });

  let n = 0;
  /** A client of one lh-server node: its camera answers after 1 s, and fails at once when the node closes it. */
  function client(baseUrl: string): { client: LiquidHandlerClient; calls: number; close(): void } {
    const transport = { isClosed: false };
    const inFlight: ((err: Error) => void)[] = [];
    const c = {
      calls: 0,
      client: {
        baseUrl,
        transport,
        deck: {
          snapshot: () => {
            c.calls++;
            if (transport.isClosed)
              return Promise.reject(
                new LhError('the connection to the instrument was closed', { kind: 'network', operation: 'snapshot' }),
              );
            return new Promise<Snapshot>((resolve, reject) => {
              inFlight.push(reject);
              setTimeout(() => resolve(photo()), 1000);
            });
          },
        },
      } as unknown as LiquidHandlerClient,
      close() {
        // as Transport.close(): closed, and every request in flight ends at once
        transport.isClosed = true;
        for (const reject of inFlight.splice(0)) reject(new Error('the connection to the instrument was closed'));
      },
    };
    return c;
  }

  it('one lh-server node removed while a photo is in flight through it: the next error gets its photo through the other', async function () {
    const url = `http://camera-${process.pid}-${++n}.example`;
    const stays = client(url);
    const goes = client(url);
    snapshotTaker(stays.client);
    const taker = snapshotTaker(goes.client); // the newest client: the photo goes through it
    const first = taker.take();
    await clock.tickAsync(100);
    goes.close(); // its lh-server node removed (a modified-nodes deploy); the other stays
    // an error raised meanwhile on the node that stays: the camera is there, and a client open to ask it
    const next = snapshotTaker(stays.client).take();
    await clock.tickAsync(SNAPSHOT_WAIT_MS);
    for (const result of [await first, await next])
      assert.ok(
        'snapshot' in result,
        `a photo through the lh-server node that stays, not: ${'error' in result ? result.error : ''}`,
      );
    assert.equal(stays.calls, 1, 'one photo: the error raised meanwhile shares it');
    assert.equal(goes.calls, 1);
  });
});
