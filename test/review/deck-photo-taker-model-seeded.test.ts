/**
 * Review71: the deck photo of raised errors over classes of cases, not single examples. A seeded run draws errors
 * raised (alone or together), photos asked ahead (pushed frames), a camera answering fast, slowly, never, with no
 * camera (404), a 500 or something that is not an image, and room for a photo given or not (a burst), on a fake clock.
 * Invariants after every step: each msg handed to `attach` comes back within SNAPSHOT_WAIT_MS, once, with exactly one
 * of a photo or a reason; never more than one camera request in flight; every slot taken is given back once the
 * request ends; a photo is not held past SNAPSHOT_MIN_INTERVAL_MS after it was taken; after a 404 the camera is not
 * asked for NO_CAMERA_RETRY_MS. LH_SEED replays a run, LH_CASES draws more steps.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError, type Snapshot } from '../../src/client';
import {
  NO_CAMERA_RETRY_MS,
  SNAPSHOT_MIN_INTERVAL_MS,
  SNAPSHOT_WAIT_MS,
  snapshotHook,
  SnapshotTaker,
} from '../../src/nodes/deck/snapshot';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Math.floor(Math.random() * 2 ** 32);
const STEPS = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

type Msg = Record<string, unknown>;
type InstalledClock = ReturnType<typeof FakeTimers.install>;
type Answer = 'fast' | 'slow' | 'hang' | 'none' | 'fails' | 'junk';

describe(`review: deck photos of raised errors against a model (seed ${SEED}, ${STEPS} steps)`, function () {
  let clock: InstalledClock;
  beforeEach(function () {
    clock = FakeTimers.install({ now: Date.parse('2026-11-30T10:00:00Z') });
  });
  afterEach(function () {
    clock.uninstall();
  });

  it('every msg back within the wait, once, with a photo or a reason; one request, slots back, photos let go', async function () {
    const rng = new Rng(SEED);
    let answer: Answer = 'fast';
    let inFlight = 0;
    let maxInFlight = 0;
    const asked: number[] = [];
    let lastPhotoAt = -Infinity;
    let noCameraAt = -Infinity;
    const capture = (): Promise<Snapshot> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      asked.push(Date.now());
      const mode = answer;
      const after = { fast: rng.int(0, 1500), slow: rng.int(1500, 8000), hang: 30_000 }[mode as 'fast'] ?? rng.int(0, 500);
      return new Promise<Snapshot>((resolve, reject) =>
        setTimeout(() => {
          inFlight--;
          if (mode === 'none') {
            noCameraAt = Date.now();
            reject(new LhError('snapshot: not found', { kind: 'http', operation: 'snapshot', statusCode: 404 }));
          } else if (mode === 'fails')
            reject(new LhError('snapshot: 500', { kind: 'http', operation: 'snapshot', statusCode: 500 }));
          else if (mode === 'junk') reject(new LhError('snapshot: not an image', { kind: 'response', operation: 'snapshot' }));
          else if (mode === 'hang') reject(new LhError('snapshot: timeout', { kind: 'timeout', operation: 'snapshot' }));
          else {
            lastPhotoAt = Date.now();
            resolve({ contentType: 'image/png', content: PNG, takenAt: new Date().toISOString() });
          }
        }, after),
      );
    };
    const taker = new SnapshotTaker(capture);
    let slotsOut = 0;
    let free = true;
    const room = (): (() => void) | undefined => {
      if (!free) return undefined;
      slotsOut++;
      let given = false;
      return () => {
        assert.equal(given, false, `seed ${SEED}: a slot given back twice`);
        given = true;
        slotsOut--;
      };
    };
    const hook = snapshotHook(taker, () => undefined, room);
    const pending = new Set<Promise<void>>();
    const trail: string[] = [];
    const failures: unknown[] = [];

    for (let step = 0; step < STEPS; step++) {
      const where = `seed ${SEED} step ${step} (${trail.slice(-6).join(', ')})`;
      const what = rng.weighted({ raise: 5, ahead: 2, camera: 2, room: 1, wait: 3 });
      trail.push(what);
      if (what === 'camera')
        answer = rng.weighted({ fast: 6, slow: 3, hang: 2, fails: 2, junk: 1, none: rng.chance(0.2) ? 1 : 0 });
      else if (what === 'room') free = rng.chance(0.7);
      else if (what === 'ahead') hook.ahead();
      else if (what === 'raise') {
        const msgs: Msg[] = Array.from({ length: rng.int(1, 4) }, (_, i) => ({ errorId: `e${step}-${i}` }));
        const at = Date.now();
        let back = 0;
        const done = hook.attach(msgs).then((out) => {
          back++;
          assert.equal(back, 1, `${where}: attach resolved once`);
          assert.ok(Date.now() - at <= SNAPSHOT_WAIT_MS, `${where}: back after ${Date.now() - at} ms`);
          assert.equal(out.length, msgs.length);
          for (const m of out) {
            const photo = m.snapshot !== undefined;
            const reason = typeof m.snapshotError === 'string' && m.snapshotError !== '';
            assert.ok(photo !== reason, `${where}: one of a photo or a reason: ${JSON.stringify(Object.keys(m))}`);
            if (photo) assert.equal((m.attachments as unknown[]).length, 1, `${where}: one attachment`);
          }
        });
        pending.add(done);
        done.then(
          () => pending.delete(done),
          (err: unknown) => failures.push(err),
        );
      }
      if (failures.length > 0) throw failures[0];
      await clock.tickAsync(what === 'wait' ? rng.pick([100, 1000, 2500, 11_000, 40_000]) : rng.int(0, 300));
      assert.ok(maxInFlight <= 1, `${where}: ${maxInFlight} camera requests in flight for one instrument`);
      assert.equal(slotsOut, inFlight, `${where}: slots out ${slotsOut}, requests in flight ${inFlight}`);
      if (taker.holdsPhoto)
        assert.ok(Date.now() - lastPhotoAt <= SNAPSHOT_MIN_INTERVAL_MS, `${where}: a photo held ${Date.now() - lastPhotoAt} ms`);
      const sinceNoCamera = asked.filter((t) => t > noCameraAt && t < noCameraAt + NO_CAMERA_RETRY_MS);
      assert.deepEqual(sinceNoCamera, [], `${where}: the camera asked within ${NO_CAMERA_RETRY_MS} ms of a 404`);
    }
    await clock.tickAsync(60_000);
    await Promise.all(pending);
    if (failures.length > 0) throw failures[0];
    assert.equal(pending.size, 0, `seed ${SEED}: every attach came back`);
    assert.equal(slotsOut, 0, `seed ${SEED}: every slot given back`);
    assert.equal(taker.holdsPhoto, false, `seed ${SEED}: no photo held a minute after the last`);
  });
});
