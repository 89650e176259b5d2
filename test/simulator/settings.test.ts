import { strict as assert } from 'node:assert';

import { bearer, describeStatus, JSON_PATCH, JSON_TYPE, problemOf, startHarness, useLoggedInHarness } from './helpers';

describe('simulator: settings and service routines (4.4)', function () {
  const h = useLoggedInHarness({ policy: { maximumLoginAttempts: 4 } });
  const settings = { hideKeyboard: true, generateRunReport: false, allowRedWarningOverride: true, defaultAmbientTemperature: 25 };

  it('reads the seeded software settings and replaces them with POST', async function () {
    const seeded = await h.a.get('/api/v1/settings/software-settings', bearer(h.token));
    assert.equal(seeded.status, 200);
    assert.deepEqual(seeded.data, {
      hideKeyboard: false,
      generateRunReport: true,
      allowRedWarningOverride: false,
      defaultAmbientTemperature: 22,
    });
    const res = await h.a.post('/api/v1/settings/software-settings', settings, bearer(h.token, JSON_PATCH));
    assert.equal(res.status, 204, describeStatus(res));
    assert.deepEqual((await h.a.get('/api/v1/settings/software-settings', bearer(h.token))).data, settings);
  });

  it('rejects incomplete or mistyped software settings with errors naming the fields, and application/json', async function () {
    const res = await h.a.post(
      '/api/v1/settings/software-settings',
      { hideKeyboard: 'no', defaultAmbientTemperature: 22.5 },
      bearer(h.token, JSON_PATCH),
    );
    assert.equal(res.status, 400);
    const p = problemOf(res);
    assert.deepEqual(Object.keys(p.errors ?? {}).sort(), [
      'allowRedWarningOverride',
      'defaultAmbientTemperature',
      'generateRunReport',
      'hideKeyboard',
    ]);
    assert.equal((await h.a.post('/api/v1/settings/software-settings', settings, bearer(h.token, JSON_TYPE))).status, 415);
  });

  it('reads the policy settings (options override defaults)', async function () {
    const res = await h.a.get('/api/v1/settings/policy-settings', bearer(h.token));
    assert.equal(res.status, 200);
    assert.deepEqual(res.data, {
      maximumLoginAttempts: 4,
      lockTimeout: 15,
      passwordExpires: 90,
      passwordExpiresNotification: 14,
      minimumPasswordLength: 6,
      inactiveLogout: 60,
      logoutCountdown: 10,
      enableUserManagement: true,
    });
  });

  it('lists and gets service routines; 404 unknown, 400 for a non-int32 id', async function () {
    const res = await h.a.get('/api/v1/verification/service-routines', bearer(h.token));
    assert.equal(res.status, 200);
    const routines = res.data as { id: number; name: string | null; isRecommended: boolean; lastRun: string | null }[];
    assert.ok(routines.length >= 4);
    for (const r of routines) {
      assert.ok(Number.isInteger(r.id));
      assert.equal(typeof r.isRecommended, 'boolean');
    }
    const one = await h.a.get(`/api/v1/verification/service-routines/${routines[0].id}`, bearer(h.token));
    assert.deepEqual(one.data, routines[0]);
    assert.equal((await h.a.get('/api/v1/verification/service-routines/999', bearer(h.token))).status, 404);
    assert.equal((await h.a.get('/api/v1/verification/service-routines/abc', bearer(h.token))).status, 400);
  });

  it('updates a service routine with PUT; validates fields; 404 for an unknown id', async function () {
    const body = { id: 3, name: 'Leak check', isRecommended: false, lastRun: '2025-01-02T03:04:05Z' };
    const res = await h.a.put('/api/v1/verification/service-routines', body, bearer(h.token, JSON_PATCH));
    assert.equal(res.status, 204, describeStatus(res));
    assert.deepEqual((await h.a.get('/api/v1/verification/service-routines/3', bearer(h.token))).data, body);
    const bad = await h.a.put(
      '/api/v1/verification/service-routines',
      { id: 3, isRecommended: 'yes', lastRun: 'yesterday' },
      bearer(h.token, JSON_PATCH),
    );
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(problemOf(bad).errors ?? {}).sort(), ['isRecommended', 'lastRun']);
    assert.equal(
      (await h.a.put('/api/v1/verification/service-routines', { name: 'x' }, bearer(h.token, JSON_PATCH))).status,
      400,
    );
    assert.equal(
      (await h.a.put('/api/v1/verification/service-routines', { id: 77, name: 'x' }, bearer(h.token, JSON_PATCH))).status,
      404,
    );
    assert.equal((await h.a.put('/api/v1/verification/service-routines', body, bearer(h.token, JSON_TYPE))).status, 415);
  });
});

describe('simulator: lenient media types', function () {
  it('accepts any JSON media type on A bodies when lenientMediaTypes is on', async function () {
    const h = await startHarness({ lenientMediaTypes: true });
    try {
      const token = await h.login();
      for (const type of [
        'application/json',
        'text/json',
        'application/vnd.lab+json',
        'application/json-patch+json; charset=utf-8',
      ]) {
        const res = await h.a.post('/api/v1/protocols/2/step', { stepType: 'PauseStep', name: type }, bearer(token, type));
        assert.equal(res.status, 200, `${type}: ${describeStatus(res)}`);
      }
      assert.equal((await h.a.post('/api/v1/protocols/2/step', '<x/>', bearer(token, 'text/xml'))).status, 415);
    } finally {
      await h.close();
    }
  });
});
