/**
 * A camera image is capped at 8 MiB, but bytes do not bound pixels: a uniform picture compresses about a
 * thousandfold, so 8 MiB of PNG can say 30,000 × 30,000 (3.6 GB decoded). That photo went to every inbox on the
 * list (msg.attachments) and to the answer page, where the phone of whoever opens it decodes it. Now the header's size
 * is read (PNG IHDR, JPEG start of frame; never the pixels) and an image over MAX_IMAGE_PIXELS or MAX_IMAGE_SIDE is
 * refused like one over the bytes' cap: the msg goes on without it, saying why. Seeded over sizes and JPEG segment
 * layouts (LH_SEED to replay, LH_CASES to draw more); a node-level case through a camera answering such a PNG.
 */
import assert from 'node:assert/strict';
import zlib from 'zlib';

import { imageSize, LhError, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, readImage, type Snapshot } from '../../src/client';
import { snapshotIn } from '../../src/nodes/deck/snapshot';
import { deckPng } from '../../src/simulator/deck-image';
import { recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { answerWith, useAnswerProxy } from '../support/answer-proxy';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Math.floor(Math.random() * 2 ** 32);
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
}

/** A PNG saying `width` × `height` (its IDAT a few compressed rows: the header is what a decoder allocates for). */
function png(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(4096))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A JPEG saying `width` × `height`: APPn / comment / table segments and fill bytes drawn before its frame header. */
function jpeg(rng: Rng, width: number, height: number): Buffer {
  const parts: Buffer[] = [Buffer.from([0xff, 0xd8])];
  for (let n = rng.int(0, 4); n > 0; n--) {
    const marker = rng.pick([0xe0, 0xe1, 0xe2, 0xed, 0xfe, 0xdb, 0xc4, 0xdd]);
    const body = Buffer.alloc(rng.int(0, 300), rng.int(0, 255));
    const len = Buffer.alloc(2);
    len.writeUInt16BE(body.length + 2);
    parts.push(Buffer.alloc(rng.int(0, 2), 0xff), Buffer.from([0xff, marker]), len, body);
    // bytes a decoder skips between segments, warning of them (libjpeg: "extraneous bytes before marker")
    if (rng.chance(0.3))
      parts.push(rng.pick([Buffer.from([0x00]), Buffer.from([0x12, 0xff, 0x00, 0x34]), Buffer.alloc(rng.int(1, 9), 0x55)]));
  }
  const sof = Buffer.from([0xff, rng.pick([0xc0, 0xc1, 0xc2]), 0, 17, 8, 0, 0, 0, 0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  parts.push(sof, Buffer.from([0xff, 0xda, 0, 2]), Buffer.alloc(64, 0x55), Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}

const over = (w: number, h: number): boolean => w * h > MAX_IMAGE_PIXELS || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE;

describe(`review: camera images capped in pixels, not only bytes (seed ${SEED}, ${CASES} cases)`, function () {
  it('readImage takes a PNG or JPEG within the caps and refuses one over them, whatever the layout', function () {
    const rng = new Rng(SEED);
    const side = (): number =>
      rng.weighted({ small: 2, edge: 2, big: 1 }) === 'small'
        ? rng.int(1, 8000)
        : rng.chance(0.5)
          ? MAX_IMAGE_SIDE + rng.int(-2, 2)
          : rng.int(1, 65_535);
    for (let i = 0; i < CASES; i++) {
      let [w, h] = [side(), side()];
      if (rng.chance(0.2)) [w, h] = [7071 + rng.int(-1, 1), 7071 + rng.int(-1, 1)]; // around 50 million pixels
      const bytes = rng.chance(0.5) ? png(w, h) : jpeg(rng, w, h);
      const what = `seed ${SEED} case ${i}: ${w} × ${h} ${bytes[0] === 0x89 ? 'PNG' : 'JPEG'}`;
      assert.deepEqual(imageSize(bytes), { width: w, height: h }, what);
      if (over(w, h)) {
        assert.throws(
          () => readImage(bytes, 'snapshot', new Date()),
          (err: unknown) => err instanceof LhError && /pixels, over the cap/.test(err.message),
          what,
        );
        const shot: Snapshot = { contentType: 'image/png', content: bytes, takenAt: '' };
        assert.equal(snapshotIn({ snapshot: shot }), undefined, `${what}: a msg's photo is not kept either`);
      } else assert.equal(readImage(bytes, 'snapshot', new Date()).content, bytes, what);
    }
  });

  it('the simulator’s deck picture is read as drawn, and taken', function () {
    const picture = deckPng({ light: { red: 255, green: 255, blue: 240, white: 200 }, plates: [1, 2] });
    assert.deepEqual(imageSize(picture), { width: 192, height: 128 });
    assert.equal(readImage(picture, 'snapshot', new Date()).contentType, 'image/png');
  });
});

describe('review: a camera answering a 30,000 × 30,000 PNG', function () {
  this.timeout(20000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      restartMemory();
    },
  });
  const bomb = png(30_000, 30_000);
  // in front of the simulator: the camera's answer is the bomb, everything else goes on
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, _up, res) =>
      req.url?.includes('/api/v1/camera/') === true && (answerWith(res, 200, { 'content-type': 'image/png' }, bomb), true),
  );

  it('the raised msg goes on without it, no attachment, saying why', async function () {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: proxy.url } });
    const raised = recordDeliveries('raised');
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
    sim.injectPendingError({ title: 'Arm collision' });
    await until(() => raised.length > 0, 'the error raised', 10_000);
    const msg = raised[0] as Msg;
    assert.equal(msg.snapshot, undefined);
    assert.equal(msg.attachments, undefined);
    assert.match(String(msg.snapshotError), /30000 × 30000 pixels, over the cap/);
  });
});
