/**
 * Review finding (a raised error's deck photo after the wall clock steps back): SnapshotTaker keeps its last result
 * (a camera error too) and "no camera" (404/501) until a time on the wall clock (Date.now). After the host's clock was
 * set back (an NTP correction, a VM resumed), `now - last.at` stayed below the interval and `now < noCameraUntil` held
 * for as long as the step: every error raised in that hour went out with the old camera error, or "no camera", and no
 * photo, though the camera answered. A last result or a no-camera time "in the future" now no longer serves.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError, type Snapshot } from '../../src/client';
import { SnapshotTaker } from '../../src/nodes/deck/snapshot';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
const HOUR = 3_600_000;

describe('review: a deck photo after the wall clock steps back', function () {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => (clock = FakeTimers.install({ now: 1_800_000_000_000 })));
  afterEach(() => clock.uninstall());

  for (const failure of [
    {
      name: 'a camera error (500)',
      err: () => new LhError('camera: 500', { kind: 'http', operation: 'deck-snapshot', statusCode: 500 }),
    },
    {
      name: 'no camera (404)',
      err: () => new LhError('camera: 404', { kind: 'http', operation: 'deck-snapshot', statusCode: 404 }),
    },
  ])
    it(`${failure.name} before the step back does not hold the next photos for as long as the step`, async function () {
      let calls = 0;
      let broken = true;
      const taker = new SnapshotTaker(async (): Promise<Snapshot> => {
        calls++;
        if (broken) throw failure.err();
        return { contentType: 'image/png', content: PNG, takenAt: new Date().toISOString() };
      });
      const first = await taker.take(2000);
      assert.ok('error' in first, 'the failure is said');
      broken = false; // the camera answers again
      clock.setSystemTime(Date.now() - HOUR); // the host's clock set back an hour (no time passes)
      await clock.tickAsync(20 * 60_000); // longer than the interval and the no-camera retry, on the timers
      const next = await taker.take(2000);
      assert.equal(calls, 2, 'the camera is asked again');
      assert.ok('snapshot' in next, `a photo, not ${JSON.stringify(next)}`);
    });
});
