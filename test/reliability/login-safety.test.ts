/**
 * Never lock a user out: a request carrying the password is sent once, and any 4xx to it holds further ones back
 * until a user acts. Simulated time (fake clock) drives a poll at 1 s through a slow rejection, a 5xx, a 400, a
 * password changed on the instrument and 20 minutes of polling: at most one rejected password per user action,
 * and every failure after it reads "login failed", never "offline".
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { failureReason } from '../../src/nodes/shared/status';
import { Simulator } from '../../src/simulator';
import { useSimulatorInTransit } from '../support/http-transit';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;

describe('login safety (simulated time)', function () {
  this.timeout(60000);
  const sim = new Simulator({ policy: { maximumLoginAttempts: 3 } });
  const transit = useSimulatorInTransit(sim);
  let clock: ReturnType<typeof FakeTimers.install>;
  const clients: LiquidHandlerClient[] = [];

  beforeEach(function () {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  });
  afterEach(async function () {
    clock.uninstall();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    sim.reset();
  });

  /** A deploy: a new client (the user acted), with a 1 s node timeout. */
  function deploy(password: string): LiquidHandlerClient {
    const c = new LiquidHandlerClient({
      baseUrl: sim.baseUrl,
      timeoutMs: 1000,
      retryBaseDelayMs: 10,
      credentials: { username: USER.username, password },
    });
    clients.push(c);
    return c;
  }

  const credentialRequests = (): { path: string; status: number }[] =>
    sim.requests.filter((r) => r.method === 'POST' && /^\/api\/v1\/authenticate(\/renew-token)?$/.test(r.path));
  const rejected = (): number => credentialRequests().filter((r) => r.status >= 400 && r.status < 500).length;

  /**
   * Polls pending errors every simulated second for `seconds` (a poll never overlaps the previous one); the clock
   * moves only when no request is in transit (real I/O never races the fake deadline, however busy the machine is).
   * Resolves with every failure, in order.
   */
  async function poll(client: LiquidHandlerClient, seconds: number): Promise<LhError[]> {
    const failures: LhError[] = [];
    let inFlight: Promise<void> | undefined;
    for (let s = 0; s < seconds; s++) {
      if (!inFlight) {
        const p: Promise<void> = client.prep.pendingErrors().then(
          () => undefined,
          (err: unknown) => void failures.push(err as LhError),
        );
        inFlight = p;
        void p.finally(() => {
          if (inFlight === p) inFlight = undefined;
        });
      }
      await transit.quiet(inFlight, realSetTimeout);
      await clock.tickAsync(1000);
    }
    // the last poll may wait for a (fake) retry delay: keep the clock going until it ends
    for (let i = 0; inFlight && i < 60; i++) {
      await transit.quiet(inFlight, realSetTimeout);
      await clock.tickAsync(1000);
    }
    return failures;
  }

  function assertLoginFailed(failures: LhError[], from: number): void {
    assert.ok(failures.length > from, 'the polls failed');
    for (const f of failures.slice(from)) {
      // a 5xx is the instrument failing (the server kind), not the credentials refused (fix75)
      if ((f.statusCode ?? 0) >= 500) {
        assert.equal(f.kind, 'http', `${f.kind}: ${f.message}`);
        assert.match(failureReason(f), /^instrument error \(login 5\d\d, not resent\)$/);
        continue;
      }
      assert.equal(f.kind, 'auth', `${f.kind}: ${f.message}`);
      assert.match(failureReason(f), /^login failed \((rejected, 4\d\d|no answer, not resent)\)$/);
    }
  }

  it('a slow rejection (1.2 s, node timeout 1 s) is awaited, not resent, and holds logins back', async function () {
    sim.setFaults({ loginRejectionDelayMs: 1200 });
    const failures = await poll(deploy('wrong-1'), 120);
    assert.equal(rejected(), 1);
    assert.equal(credentialRequests().length, 1);
    assertLoginFailed(failures, 0);
    assert.match(failures[0].message, /rejected \(401\)/);
  });

  it('a 5xx to a login is not resent within the request and reads "instrument error"; a poll 1 s later logs in', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    const c = deploy(USER.password);
    await assert.rejects(c.prep.pendingErrors(), (err: LhError) => err.kind === 'http' && /503/.test(err.message));
    assert.equal(credentialRequests().length, 1, 'sent once');
    sim.clearFaults();
    // at once: not sent again (logins failing without a verdict are spaced out: 1 s, 2 s, 4 s, …)
    await assert.rejects(c.prep.pendingErrors(), (err: LhError) => /not sent: the last login failed .*503/.test(err.message));
    assert.equal(credentialRequests().length, 1);
    await clock.tickAsync(1000);
    assert.deepEqual(await poll(c, 3), []);
    assert.equal(rejected(), 0);
  });

  it('a 400 to a login holds further logins back until the user acts', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 400 });
    const c = deploy(USER.password);
    const failures = await poll(c, 60);
    assert.equal(credentialRequests().length, 1);
    assertLoginFailed(failures, 0);
    sim.clearFaults();
    assert.ok((await poll(c, 30)).length > 0, 'still held back without a user action');
    assert.equal(credentialRequests().length, 1);
    c.session.allowLoginAgain(); // Test connection or a deploy
    assert.deepEqual(await poll(c, 3), []);
    assert.equal(credentialRequests().length, 2);
  });

  it('a password changed on the instrument: one rejected renewal, no login after it', async function () {
    const c = deploy(USER.password);
    assert.deepEqual(await poll(c, 10), []);
    sim.setUserPassword(USER.username, 'changed-by-admin');
    const failures = await poll(c, 6 * 60); // the 5-minute token is renewed 15 s before its end, with the old password
    assert.equal(rejected(), 1);
    const last = credentialRequests().at(-1);
    assert.equal(last?.path, '/api/v1/authenticate/renew-token', 'the rejected renewal was not followed by a login');
    assertLoginFailed(failures, 0);
  });

  it('20 minutes of polling at 1 s with a wrong password: one rejection per user action, never a lockout', async function () {
    const first = await poll(deploy('wrong-2'), 20 * 60);
    assert.equal(rejected(), 1);
    assertLoginFailed(first, 0);
    await poll(deploy('wrong-3'), 60); // a second deploy: one more attempt
    assert.equal(rejected(), 2);
    assert.deepEqual(await poll(deploy(USER.password), 3), [], 'the user was never locked out');
  });
});
