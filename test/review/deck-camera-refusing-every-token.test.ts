/**
 * Review finding (fix86, item 1): a deck camera that answers 401 to every token (the user lacks the camera
 * permission, a camera service refusing) cost one login per photo: the session answers a 401 with a fresh login and
 * one more try, the photo failed again, and 10 s later (SNAPSHOT_MIN_INTERVAL_MS, past the session's own
 * FRESH_TOKEN_REFUSED_MS guard) the next raised error's photo logged in again, for as long as errors were raised. Now a
 * 401 that the fresh login did not cure backs the camera off like a 404 (NO_CAMERA_RETRY_MS), says so in the reason
 * (`msg.snapshotError`), and the camera is asked again after the back-off, or at once after a Test connection.
 *
 * Against the simulator over real HTTP (its camera set to answer 401); only Date is faked, so the rate limit and the
 * back-off pass without waiting.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { resetHomes } from '../../src/instrument';
import {
  askCameraAgain,
  NO_CAMERA_RETRY_MS,
  SNAPSHOT_MIN_INTERVAL_MS,
  SnapshotTaker,
  snapshotTaker,
} from '../../src/nodes/deck/snapshot';
import { useClients } from '../support/client-suite';

describe('review: a deck camera that answers 401 to every token', function () {
  this.timeout(15000);
  const suite = useClients();
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    resetHomes();
  });

  const logins = (): number => suite.sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate').length;
  const cameraAsked = (): number => suite.sim.requests.filter((r) => r.path.startsWith('/api/v1/camera/')).length;

  it('costs one fresh login, not one per photo; said in the reason; asked again after the back-off', async function () {
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    suite.sim.configureDeck({ cameraRefuses: true });
    const client = suite.make();
    await client.prep.checkAuthentication().catch(() => undefined); // logged in before the first photo
    const taker = new SnapshotTaker(() => client.deck.snapshot(true));
    const loginsBefore = logins();
    const reasons: string[] = [];
    for (let photo = 0; photo < 6; photo++) {
      const result = await taker.take(5000);
      reasons.push('error' in result ? result.error : 'a photo');
      clock.tick(SNAPSHOT_MIN_INTERVAL_MS + 1);
    }
    assert.equal(logins() - loginsBefore, 1, 'one fresh login for the first refusal, none for the photos after it');
    assert.equal(cameraAsked(), 2, 'the camera asked twice (before and after that login), then left alone');
    for (const reason of reasons) {
      assert.match(reason, /refused this user \(401\) even after a fresh login/);
      assert.match(reason, /asked again in 10 minutes, or at once after a Test connection/);
    }

    suite.sim.configureDeck({ cameraRefuses: false }); // the user got the permission
    clock.tick(NO_CAMERA_RETRY_MS);
    const back = await taker.take(5000);
    assert.ok('snapshot' in back, `a photo once the back-off is over, not ${JSON.stringify(back)}`);
  });

  it('a Test connection (askCameraAgain) ends the back-off: the next photo asks the camera at once', async function () {
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    suite.sim.configureDeck({ cameraRefuses: true });
    const client = suite.make();
    const taker = snapshotTaker(client);
    assert.ok('error' in (await taker.take(5000)));
    const asked = cameraAsked();
    clock.tick(SNAPSHOT_MIN_INTERVAL_MS + 1);
    assert.ok('error' in (await taker.take(5000)));
    assert.equal(cameraAsked(), asked, 'backed off');
    suite.sim.configureDeck({ cameraRefuses: false });
    askCameraAgain(client);
    const back = await taker.take(5000);
    assert.ok('snapshot' in back, `a photo at once, not ${JSON.stringify(back)}`);
  });

  it('a refused login is not the camera refusing: no camera back-off for it', async function () {
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    const client = suite.make({ credentials: { username: 'operator', password: 'wrong-password-for-test' } });
    const taker = new SnapshotTaker(() => client.deck.snapshot(true));
    const first = await taker.take(5000);
    assert.ok('error' in first);
    assert.doesNotMatch(first.error, /refused this user \(401\) even after a fresh login/);
  });
});
