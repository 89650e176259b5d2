/** Issue 33: an answer page keeps a photo until its link expires, not a moment longer, bounded in count and bytes. */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import type { Snapshot } from '../../src/client';
import { PagePhotos } from '../../src/nodes/deck/page-photos';

const shot = (bytes: number): Snapshot => ({ contentType: 'image/png', content: Buffer.alloc(bytes), takenAt: '' });

describe('answer-page photos: kept until the link expires, bounded', function () {
  it('drops a photo when its link expires, whether or not anyone asks (timer)', async function () {
    const clock = FakeTimers.install({ now: 1000 });
    try {
      const photos = new PagePhotos();
      photos.keep('a', shot(10), 1000 + 60_000);
      photos.keep('b', shot(10), 1000 + 120_000);
      await clock.tickAsync(59_999);
      assert.equal(photos.size, 2);
      await clock.tickAsync(2);
      assert.equal(photos.size, 1, 'a is gone at its expiry');
      assert.equal(photos.get('a'), undefined);
      await clock.tickAsync(60_000);
      assert.equal(photos.size, 0);
      photos.keep('c', shot(1), 500); // already expired: not kept
      assert.equal(photos.size, 0);
    } finally {
      clock.uninstall();
    }
  });

  it('a link of up to 90 days (past the longest timer, under 25 days): its photo still goes at its expiry', async function () {
    const clock = FakeTimers.install({ now: 1000 });
    try {
      const day = 24 * 3_600_000;
      const photos = new PagePhotos();
      photos.keep('month', shot(10), 1000 + 30 * day);
      photos.keep('quarter', shot(10), 1000 + 90 * day);
      await clock.tickAsync(30 * day - 1);
      assert.equal(photos.size, 2, 'both links still valid');
      await clock.tickAsync(2);
      assert.equal(photos.size, 1, 'the 30-day photo is gone at its expiry, with nobody asking');
      await clock.tickAsync(60 * day);
      assert.equal(photos.size, 0, 'the 90-day one at its own');
      assert.equal(clock.countTimers(), 0, 'no timer left behind');
    } finally {
      clock.uninstall();
    }
  });

  it('closed (the node redeployed while a photo was being taken): a photo arriving then is not kept, no timer', async function () {
    const clock = FakeTimers.install({ now: 1000 });
    try {
      const photos = new PagePhotos();
      photos.keep('a', shot(10), 1000 + 3_600_000);
      photos.close(); // the node's close
      photos.keep('late', shot(10), 1000 + 24 * 3_600_000); // the photo the closing node was waiting for
      assert.equal(photos.size, 0, 'nothing held by a closed node, which nobody can ask any more');
      assert.equal(clock.countTimers(), 0, 'no timer keeping a photo alive until its link expires');
    } finally {
      clock.uninstall();
    }
  });

  it('never holds more than its count and byte caps, whatever is kept (property)', function () {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), bytes: fc.integer({ min: 0, max: 40 }) }), {
          maxLength: 60,
        }),
        (ops) => {
          const photos = new PagePhotos(4, 100);
          const now = Date.now();
          for (const op of ops) {
            photos.keep(op.key, shot(op.bytes), now + 3_600_000, now);
            assert.ok(photos.size <= 4);
          }
          let total = 0;
          for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) total += photos.get(key, now)?.content.length ?? 0;
          assert.ok(total <= 100, `${total} bytes`);
          photos.close();
        },
      ),
    );
  });
});
