import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import axios from 'axios';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { Simulator } from '../../src/simulator';
import { useClients } from '../support/client-suite';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;

function logins(sim: Simulator): number {
  return sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'POST').length;
}

describe('session', function () {
  const suite = useClients({ policy: { maximumLoginAttempts: 3 } }, { retryBaseDelayMs: 10 });
  const sim = suite.sim;
  const make = (password = USER.password): LiquidHandlerClient =>
    suite.make({ credentials: { username: USER.username, password } });

  it('logs in once for a burst of 200 concurrent requests', async function () {
    const c = make();
    const results = await Promise.all(Array.from({ length: 200 }, () => c.prep.getSoftwareSettings()));
    assert.equal(results.length, 200);
    assert.equal(logins(sim), 1);
    assert.equal(c.session.stats.logins, 1);
  });

  it('sends the bearer token to A and B, and the versioned media type to B', async function () {
    const c = make();
    await c.prep.listSteps(1);
    await c.instrument.registerErrorHandler('bench1');
    const a = sim.requests.find((r) => r.path === '/api/v1/protocols/1/step');
    const b = sim.requests.find((r) => r.path === '/api/vector/v3/error-handler');
    assert.match(a?.authorization ?? '', /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(b?.authorization, a?.authorization);
    assert.equal(b?.contentType, 'application/json; x-api-version=3.0');
    assert.equal(b?.body, 'bench1');
  });

  it('logs in again once and retries once when a token is rejected with 401', async function () {
    const c = make();
    await c.prep.getSoftwareSettings();
    const token = (sim.requests.find((r) => r.path === '/api/v1/settings/software-settings')?.authorization ?? '').slice(7);
    // The session ends behind the client's back (e.g. logged out on the instrument's screen).
    await axios.delete(`${sim.baseUrl}/api/v1/authenticate`, { headers: { Authorization: `Bearer ${token}` } });
    const results = await Promise.all(Array.from({ length: 20 }, () => c.prep.getSoftwareSettings()));
    assert.equal(results.length, 20);
    assert.equal(logins(sim), 2);
  });

  /** Runs `work` on a fake clock (Date and timers; the simulator's token clock too), real I/O in between. */
  async function onFakeClock(work: (clock: ReturnType<typeof FakeTimers.install>) => Promise<void>): Promise<void> {
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      await work(clock);
    } finally {
      clock.uninstall();
    }
  }

  /** Waits (real time, bounded) until `done()`: a request started by a fake timer needs real I/O to finish. */
  async function until(done: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => realSetTimeout(r, 5));
  }

  it('renews the token on time even when requests are sparser than the renewal window', async function () {
    await onFakeClock(async (clock) => {
      const c = make(); // a 5-minute token, renewed 15 s before its end
      for (let t = 0; t < 500; t += 100) {
        await c.prep.getSoftwareSettings();
        await clock.tickAsync(100_000);
        await until(() => c.session.state === 'authenticated' && !sim.requests.some((r) => r.status === 0));
      }
      assert.equal(logins(sim), 1);
      assert.ok(c.session.stats.renewals >= 1, `renewals: ${c.session.stats.renewals}`);
      assert.equal(sim.requests.filter((r) => r.status === 401).length, 0);
    });
  });

  it('lets an unused session lapse instead of renewing it forever', async function () {
    await onFakeClock(async (clock) => {
      const c = make();
      await c.prep.getSoftwareSettings(); // the first token is used, so it is renewed on schedule...
      await clock.tickAsync(290_000);
      await until(() => c.session.stats.renewals === 1);
      assert.equal(c.session.stats.renewals, 1);
      await clock.tickAsync(600_000); // ...but nobody used the renewed one: no second renewal
      await until(() => false === sim.requests.some((r) => r.status === 0));
      assert.equal(c.session.stats.renewals, 1);
    });
  });

  it('a renewal refused because the session ended on the instrument (its token refused too) logs in once and goes on', async function () {
    await onFakeClock(async (clock) => {
      const c = make();
      await c.prep.getSoftwareSettings(); // in use: renewed on schedule, 15 s before the end of its 5 minutes
      const token = (sim.requests.find((r) => r.path === '/api/v1/settings/software-settings')?.authorization ?? '').slice(7);
      // logged out on the instrument's screen (or the instrument restarted) just before the renewal
      await axios.delete(`${sim.baseUrl}/api/v1/authenticate`, { headers: { Authorization: `Bearer ${token}` } });
      await clock.tickAsync(290_000);
      await until(() => logins(sim) === 2 && c.session.state === 'authenticated');
      assert.equal(c.session.state, 'authenticated', 'not held until a deploy');
      await c.prep.getSoftwareSettings();
      assert.equal(logins(sim), 2, 'one login after the refused renewal');
    });
  });

  it('a renewal refused while its token is still a session (the user locked meanwhile) sends no login', async function () {
    await onFakeClock(async (clock) => {
      const c = make();
      await c.prep.getSoftwareSettings();
      const other = make('wrong'); // another Node-RED with a wrong password locks the user (3 attempts)
      for (let i = 0; i < 3; i++) {
        other.session.allowLoginAgain();
        await assert.rejects(other.prep.getSoftwareSettings());
      }
      const before = logins(sim);
      await clock.tickAsync(290_000);
      await until(() => c.session.state !== 'authenticated');
      await assert.rejects(c.prep.getSoftwareSettings(), (err: LhError) => err.kind === 'auth');
      assert.equal(logins(sim), before, 'the renewal carried the password: no login after it');
      assert.notEqual(c.session.state, 'authenticated');
    });
  });

  it('an instrument refusing every token it issues (401 to each read) costs one login per 10 s, not one per request', async function () {
    await onFakeClock(async (clock) => {
      const c = make();
      await c.prep.getSoftwareSettings();
      // from now on every read is answered 401 (the instrument's clock behind the tokens, or a role the user lacks)
      sim.setFaults({ statusRate: 1, statusCode: 401, methods: ['GET'] });
      const failures: string[] = [];
      for (let i = 0; i < 60; i++) {
        // a poll every 0.5 s for 30 s
        await c.prep.getSoftwareSettings().catch((err: LhError) => failures.push(err.message));
        await clock.tickAsync(500);
      }
      sim.setFaults({});
      assert.equal(failures.length, 60, 'every read failed');
      // the first 401 logs in again (the session may have ended on the instrument); its fresh token refused too, the
      // next login waits 10 s: over 30 s at most 1 + 3
      const after = logins(sim) - 1;
      assert.ok(after >= 1 && after <= 4, `logins after the first: ${after}`);
      assert.match(failures[1], /refused \(401\) a token it issued .* s ago.*clock.*permissions/s);
      assert.equal(c.session.state, 'authenticated', 'no login refused: nothing held until a deploy');
      await c.prep.getSoftwareSettings(); // the instrument well again: the next read goes through
    });
  });

  it('tries a rejected password exactly once, however many requests follow', async function () {
    const c = make('wrong');
    for (let i = 0; i < 10; i++) {
      await assert.rejects(c.prep.getSoftwareSettings(), (err: LhError) => {
        assert.equal(err.kind, 'auth');
        assert.match(err.message, /rejected.*not sent again/s);
        assert.doesNotMatch(err.message, /wrong/);
        return true;
      });
    }
    assert.equal(logins(sim), 1);
    assert.equal(c.session.state, 'login-failed');
    // The user may try again explicitly: one more attempt, still far from the lockout at 3.
    c.session.allowLoginAgain();
    await assert.rejects(c.prep.getSoftwareSettings());
    assert.equal(logins(sim), 2);
  });

  it('points an expired password at the change-password path', async function () {
    sim.setUserPasswordExpired('admin', true);
    const c = make();
    await assert.rejects(c.prep.getSoftwareSettings(), /expired.*Change expired password/s);
    assert.equal(c.session.state, 'password-expired');
    await c.prep.changeExpiredPassword('admin', 'labwire', 'labwire-2026');
    const after = make('labwire-2026');
    await after.prep.getSoftwareSettings();
    assert.equal(after.session.state, 'authenticated');
  });

  it('logs out when closed', async function () {
    const c = suite.unmanaged();
    await c.prep.getSoftwareSettings();
    await c.close();
    const logout = sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'DELETE');
    assert.equal(logout.length, 1);
  });
});
