/**
 * Issue 21.3: check-authentication as the session health check. While logged in, the client asks the instrument
 * periodically whether its token holds, so a token revoked on the instrument is renewed before a node needs it, also
 * in a flow that polls nothing; it never logs in by itself (idle, refused or locked sessions are left alone).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import axios from 'axios';
import fc from 'fast-check';

import { CHECK_AUTHENTICATION, LhError, sessionCheckDue, SessionState } from '../../src/client';
import { sessionCheckInterval } from '../../src/nodes/lh-server/session-check';
import { Simulator } from '../../src/simulator';
import { useClients } from '../support/client-suite';
import { USER } from '../support/runtime';
import { until } from '../support/until';

const checks = (sim: Simulator): number =>
  sim.requests.filter((r) => r.path === '/api/v1/authenticate/check-authentication').length;
const logins = (sim: Simulator): number =>
  sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'POST').length;

describe('session health check (check-authentication)', function () {
  const suite = useClients();
  const sim = suite.sim;
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it('is due only for a session that is logged in, never one that would have to log in', function () {
    const states: SessionState[] = [
      'idle',
      'logging-in',
      'authenticated',
      'login-failed',
      'password-expired',
      'locked',
      'closed',
    ];
    for (const state of states) {
      assert.equal(sessionCheckDue(state, true), state === 'authenticated', state);
      assert.equal(sessionCheckDue(state, false), false, `${state} without a user`);
    }
  });

  it('property: the interval from settings.js is off at 0, within 0.1 s … 24 h, and anything else keeps 5 min and says so', function () {
    assert.deepEqual(sessionCheckInterval(undefined), { ms: 300_000 });
    assert.deepEqual(sessionCheckInterval(0), { ms: 0 });
    fc.assert(
      fc.property(
        fc.oneof(fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.integer({ min: 1, max: 2 ** 40 })),
        (value) => {
          const { ms, problem } = sessionCheckInterval(value);
          if (value === 0) return assert.equal(ms, 0);
          assert.ok(ms >= 100 && ms <= 86_400_000, `${String(value)} → ${ms} ms`);
          const plain = typeof value === 'number' && value >= 0.1 && value <= 86_400 && Number.isFinite(value);
          if (plain) assert.equal(ms, Math.round(value * 1000));
          assert.equal(problem === undefined, plain || ms === Math.round(Number(value) * 1000), String(value));
          if (problem) assert.match(problem, /liquidHandler\.sessionCheckSeconds/);
        },
      ),
    );
  });

  it('asks nothing before the first login, then checks; a token revoked on the instrument is renewed by the check', async function () {
    clock = FakeTimers.install({ toFake: ['setInterval', 'clearInterval'] });
    const c = suite.make({ credentials: { username: USER.username, password: USER.password } });
    const reports: (LhError | undefined)[] = [];
    const stop = c.checkSessionEvery(60_000, (err) => reports.push(err));
    clock.tick(60_000);
    assert.equal(checks(sim), 0, 'no check (and no login) while the session is idle');
    assert.equal(logins(sim), 0);

    await c.prep.getSoftwareSettings(); // a node's request logs in
    clock.tick(60_000);
    await until(() => reports.length === 1, 'the first check');
    assert.equal(reports[0], undefined, 'the token holds');
    assert.equal(checks(sim), 1);

    // the session ends behind the client's back (logged out on the instrument's screen)
    const token = (sim.requests.find((r) => r.path === '/api/v1/settings/software-settings')?.authorization ?? '').slice(7);
    await axios.delete(`${sim.baseUrl}/api/v1/authenticate`, { headers: { Authorization: `Bearer ${token}` } });
    clock.tick(60_000);
    await until(() => reports.length === 2, 'the second check');
    assert.equal(reports[1], undefined, 'the check logged in again once and holds');
    assert.equal(logins(sim), 2);
    const before = sim.requests.length;
    await c.prep.getSoftwareSettings();
    assert.equal(sim.requests.length, before + 1, "the node's next request needs no login");

    stop();
    clock.tick(600_000);
    assert.equal(checks(sim), 3, 'stopped: no more checks');
  });

  it('never logs in or renews for a check: past the renewal time nothing is sent, and the idle session lapses (review)', async function () {
    clock = FakeTimers.install({ toFake: ['Date'] });
    const c = suite.make({ credentials: { username: USER.username, password: USER.password } });
    await c.prep.getSoftwareSettings(); // one request, then the flow is idle
    assert.equal(await c.session.checkHeld(CHECK_AUTHENTICATION), true, 'sent while the token holds');
    clock.tick(4 * 60_000);
    assert.equal(await c.session.checkHeld(CHECK_AUTHENTICATION), true, 'still before the renewal time (5 min token)');
    for (const minutes of [0.9, 1, 5, 60]) {
      clock.tick(minutes * 60_000);
      assert.equal(await c.session.checkHeld(CHECK_AUTHENTICATION), false, `${minutes} min later: due for renewal or expired`);
    }
    const renewals = sim.requests.filter((r) => r.path === '/api/v1/authenticate/renew-token').length;
    assert.equal(logins(sim), 1, 'the one login of the request');
    assert.equal(renewals, 0, 'no renewal for a session nobody uses');
    assert.equal(checks(sim), 2);
  });

  it('a check in flight when the client closes sends no login after close, and reports nothing (review)', async function () {
    const c = suite.unmanaged({ credentials: { username: USER.username, password: USER.password } });
    const reports: (LhError | undefined)[] = [];
    await c.prep.getSoftwareSettings();
    // the token is revoked on the instrument, and the instrument is slow
    const token = (sim.requests.find((r) => r.path === '/api/v1/settings/software-settings')?.authorization ?? '').slice(7);
    await axios.delete(`${sim.baseUrl}/api/v1/authenticate`, { headers: { Authorization: `Bearer ${token}` } });
    sim.setFaults({ latencyMs: 300 });
    const stop = c.checkSessionEvery(100, (err) => reports.push(err));
    await until(() => checks(sim) === 1, 'a check in flight');
    stop();
    const loginsBefore = logins(sim);
    await c.close();
    sim.clearFaults();
    assert.equal(logins(sim), loginsBefore, 'no login after close');
    assert.equal(c.session.state, 'closed');
    assert.deepEqual(reports, [], 'nothing reported after the checks were stopped');
  });
});
