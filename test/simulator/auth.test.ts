import { strict as assert } from 'node:assert';

import FakeTimers from '@sinonjs/fake-timers';

import { bearer, describeStatus, Harness, JSON_PATCH, JSON_TYPE, problemOf, startHarness } from './helpers';

function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>,
    claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}

describe('simulator: authentication (4.2)', function () {
  let h: Harness;
  const patch = { headers: { 'Content-Type': JSON_PATCH } };

  before(async function () {
    h = await startHarness({
      users: [
        { username: 'admin', password: 'labwire' },
        { username: 'tech', password: 'secret1', passwordExpired: true },
        { username: 'victim', password: 'right-one' },
      ],
      policy: { maximumLoginAttempts: 3, lockTimeout: 1 },
    });
  });
  after(async function () {
    await h.close();
  });

  it('logs in and returns an auth result with a real HS256 JWT', async function () {
    const res = await h.a.post('/api/v1/authenticate', { username: 'admin', password: 'labwire' }, patch);
    assert.equal(res.status, 200, describeStatus(res));
    assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8/);
    const r = res.data as Record<string, unknown>;
    assert.equal(r.userName, 'admin');
    assert.match(String(r.userId), /^[0-9a-f]{32}$/);
    assert.equal(r.inactiveLogout, 60);
    assert.equal(r.logoutCountdown, 10);
    assert.equal(r.expiresIn, 5);
    assert.equal(r.passwordExpiresInDays, 90);
    assert.equal(r.notifyPasswordExpiresSoon, false);
    const { header, claims } = decodeJwt(String(r.token));
    assert.deepEqual(header, { alg: 'HS256', typ: 'JWT' });
    assert.equal(claims.nameid, r.userId);
    assert.equal(claims.given_name, 'admin');
    assert.ok(Array.isArray(claims.role));
    assert.equal(Math.round(Number(claims.exp) - Number(claims.iat)), 300);
    const again = await h.login();
    assert.notEqual(decodeJwt(again).claims.jti, claims.jti);
  });

  it('matches property names case-insensitively', async function () {
    const res = await h.a.post('/api/v1/authenticate', '{"UserName":"admin","PassWord":"labwire"}', patch);
    assert.equal(res.status, 200, describeStatus(res));
  });

  it('answers 401 problem details for a wrong password or an unknown user', async function () {
    const wrong = await h.a.post('/api/v1/authenticate', { username: 'admin', password: 'nope' }, patch);
    assert.equal(wrong.status, 401);
    problemOf(wrong);
    const unknown = await h.a.post('/api/v1/authenticate', { username: 'ghost', password: 'x' }, patch);
    assert.equal(unknown.status, 401);
    assert.ok(h.sim.state.failedLogins >= 2);
  });

  it('answers 400 for a body without username and 415 for application/json', async function () {
    const missing = await h.a.post('/api/v1/authenticate', { password: 'x' }, patch);
    assert.equal(missing.status, 400);
    assert.ok(problemOf(missing).errors?.username);
    const wrongType = await h.a.post(
      '/api/v1/authenticate',
      { username: 'admin', password: 'labwire' },
      { headers: { 'Content-Type': JSON_TYPE } },
    );
    assert.equal(wrongType.status, 415);
    problemOf(wrongType);
    const broken = await h.a.post('/api/v1/authenticate', '{"username":', patch);
    assert.equal(broken.status, 400);
  });

  it('requires a valid bearer everywhere else: 401 with WWW-Authenticate', async function () {
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }, { Authorization: 'Basic YWRtaW46bGFid2lyZQ==' }]) {
      const res = await h.a.get('/api/v1/settings/policy-settings', { headers });
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      problemOf(res);
    }
    const token = await h.login();
    const ok = await h.a.get('/api/v1/authenticate/check-authentication', bearer(token));
    assert.equal(ok.status, 200);
    const forged = token.slice(0, -3) + (token.endsWith('AAA') ? 'BBB' : 'AAA');
    assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(forged))).status, 401);
  });

  it('DELETE authenticate ends the session: the token is refused afterwards', async function () {
    const token = await h.login();
    const out = await h.a.delete('/api/v1/authenticate', bearer(token));
    assert.equal(out.status, 204);
    assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(token))).status, 401);
    assert.equal((await h.a.delete('/api/v1/authenticate', bearer(token))).status, 401);
  });

  it('renew-token returns a new token for a valid bearer and the same credentials, and counts renewals', async function () {
    const token = await h.login();
    const before = h.sim.state.renewals;
    const res = await h.a.post(
      '/api/v1/authenticate/renew-token',
      { username: 'admin', password: 'labwire' },
      bearer(token, JSON_PATCH),
    );
    assert.equal(res.status, 200, describeStatus(res));
    const fresh = (res.data as { token: string }).token;
    assert.notEqual(fresh, token);
    assert.equal(h.sim.state.renewals, before + 1);
    assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(fresh))).status, 200);
    const noBearer = await h.a.post('/api/v1/authenticate/renew-token', { username: 'admin', password: 'labwire' }, patch);
    assert.equal(noBearer.status, 401);
  });

  it('locks a user after maximumLoginAttempts wrong passwords and unlocks after lockTimeout', async function () {
    h.sim.setFaults({ clockSpeed: 120 }); // lockTimeout 1 min → 0.5 s
    try {
      for (let i = 0; i < 3; i++) {
        const res = await h.a.post('/api/v1/authenticate', { username: 'victim', password: 'wrong' }, patch);
        assert.equal(res.status, 401);
      }
      const locked = await h.a.post('/api/v1/authenticate', { username: 'victim', password: 'right-one' }, patch);
      assert.equal(locked.status, 401);
      assert.match(String(problemOf(locked).detail), /locked/i);
      // bounded poll: the lock lasts 0.5 s
      const deadline = Date.now() + 5000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await h.a.post('/api/v1/authenticate', { username: 'victim', password: 'right-one' }, patch)).status;
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200);
    } finally {
      h.sim.clearFaults();
    }
  });

  it('expired password: 403 "Password expired", change-expired-password, then login works', async function () {
    const refused = await h.a.post('/api/v1/authenticate', { username: 'tech', password: 'secret1' }, patch);
    assert.equal(refused.status, 403);
    assert.equal(problemOf(refused).title, 'Password expired');
    const tooShort = await h.a.post(
      '/api/v1/authenticate/change-expired-password',
      { userName: 'tech', oldPassword: 'secret1', newPassword: 'abc' },
      patch,
    );
    assert.equal(tooShort.status, 400);
    assert.ok(problemOf(tooShort).errors?.newPassword);
    const wrongOld = await h.a.post(
      '/api/v1/authenticate/change-expired-password',
      { userName: 'tech', oldPassword: 'nope', newPassword: 'longenough' },
      patch,
    );
    assert.equal(wrongOld.status, 401);
    const changed = await h.a.post(
      '/api/v1/authenticate/change-expired-password',
      { userName: 'tech', oldPassword: 'secret1', newPassword: 'longenough' },
      patch,
    );
    assert.equal(changed.status, 204, describeStatus(changed));
    await h.login('tech', 'longenough');
    h.sim.setUserPasswordExpired('tech', true);
    assert.equal((await h.a.post('/api/v1/authenticate', { username: 'tech', password: 'longenough' }, patch)).status, 403);
  });

  it('setup-wizard works once; kba-password-reset returns an auth result for the first user', async function () {
    const first = await h.a.post('/api/v1/authenticate/setup-wizard');
    assert.equal(first.status, 200, describeStatus(first));
    assert.equal((first.data as { userName: string }).userName, 'admin');
    const second = await h.a.post('/api/v1/authenticate/setup-wizard');
    assert.equal(second.status, 400);
    problemOf(second);
    const kba = await h.a.post('/api/v1/authenticate/kba-password-reset');
    assert.equal(kba.status, 200);
    assert.equal(typeof (kba.data as { token: unknown }).token, 'string');
  });

  it('a token expires after its lifetime (clockSpeed shortens it)', async function () {
    h.sim.setFaults({ clockSpeed: 1000 }); // 300 s → 0.3 s
    // the simulator's clock (Date) stands still but for the tick: a busy machine that takes 0.3 s between two
    // requests does not expire the token early (run 36 of the CI-like runs)
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    try {
      const token = await h.login();
      assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(token))).status, 200);
      clock.tick(299);
      assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(token))).status, 200);
      clock.tick(2);
      assert.equal((await h.a.get('/api/v1/authenticate/check-authentication', bearer(token))).status, 401);
      const renew = await h.a.post(
        '/api/v1/authenticate/renew-token',
        { username: 'admin', password: 'labwire' },
        bearer(token, JSON_PATCH),
      );
      assert.equal(renew.status, 401);
    } finally {
      clock.uninstall();
      h.sim.clearFaults();
    }
  });
});

describe('simulator: short token lifetime and open policy', function () {
  it('tokenLifetimeSeconds sets exp and expiresIn', async function () {
    const h = await startHarness({ tokenLifetimeSeconds: 90 });
    try {
      const res = await h.a.post(
        '/api/v1/authenticate',
        { username: 'admin', password: 'labwire' },
        { headers: { 'Content-Type': JSON_PATCH } },
      );
      assert.equal((res.data as { expiresIn: number }).expiresIn, 2);
    } finally {
      await h.close();
    }
  });

  it('enableUserManagement false: A operations need no token', async function () {
    const h = await startHarness({ policy: { enableUserManagement: false } });
    try {
      assert.equal((await h.a.get('/api/v1/settings/software-settings')).status, 200);
      assert.equal((await h.b.get('/api/vector/v3/error-handler')).status, 401);
    } finally {
      await h.close();
    }
  });
});
