/**
 * Review (review33, apply locks). lh-protocol's apply holds its protocol's lock in Redis (SET NX PX 30 s, renewed by
 * compare-and-extend every 10 s and before each write). Redis restored from an older snapshot mid-apply gives the
 * lock key back to nobody (taken after the snapshot), to the apply itself (taken before), or to an earlier apply's
 * value (that one released after the snapshot). In each case at most one apply goes on writing after the restore (none for a while in the last case): the
 * first stops before its next write when its lock is no longer its own, a second is refused while an older value
 * holds the key (until it expires), and an apply whose lock came back with the snapshot goes on alone. README: "a
 * lock lost midway stops the apply before its next write", "Redis loses its data". Real redis-server restarted on a
 * copy of an older dump.rdb.
 */
import assert from 'node:assert/strict';

import { ApplyLocks } from '../../src/coordination/apply-locks';
import { CoordinationKeys } from '../../src/coordination/keys';
import type { RedisLike } from '../../src/coordination/leases';
import { describeWithRedis, useOlderDumps } from '../support/redis-server';

describeWithRedis('review: an apply lock when Redis came back from an older snapshot mid-apply', function () {
  this.timeout(60000);
  const dumps = useOlderDumps();
  let run = 0;

  /** Whether the held lock lets its apply write now (confirm() before each write). */
  const writes = (lock: { confirm(): Promise<void> }): Promise<boolean> =>
    lock.confirm().then(
      () => true,
      (err: Error) => {
        assert.match(err.message, /the lock this apply held in Redis was lost/);
        return false;
      },
    );

  for (const snapshotHolds of ['nothing', 'this apply', 'an earlier apply'] as const) {
    it(`the snapshot held ${snapshotHolds}: after the restore one apply writes at most`, async function () {
      const k = new CoordinationKeys(`lh-apply-restore-${process.pid}-${++run}`).instrument('inst');
      const redis = dumps.redis as unknown as RedisLike;
      const a = new ApplyLocks(redis, k, 'r1');
      const b = new ApplyLocks(redis, k, 'r2');
      let older = '';
      if (snapshotHolds === 'an earlier apply') {
        const earlier = await b.take(7, 'apply');
        older = await dumps.snapshot();
        await earlier.release();
      }
      if (snapshotHolds === 'nothing') older = await dumps.snapshot();
      const first = await a.take(7, 'apply');
      if (snapshotHolds === 'this apply') older = await dumps.snapshot();
      assert.equal(await writes(first), true, 'the apply writes before the restore');
      await dumps.restartFrom(older);

      const second = await b.take(7, 'apply').catch((err: Error) => {
        assert.match(err.message, /protocol 7 is locked/);
        return undefined;
      });
      const writers = [await writes(first), second ? await writes(second) : false];
      const expected = { nothing: [false, true], 'this apply': [true, false], 'an earlier apply': [false, false] };
      // nothing: the first stops before its next write, the second goes on; this apply: it goes on, the second is
      // refused; an earlier apply: the first stops, the second is refused until that value expires (30 s at most)
      assert.deepEqual(writers, expected[snapshotHolds], `which applies write after the restore: ${JSON.stringify(writers)}`);
      await first.release();
      await second?.release();
    });
  }
});
