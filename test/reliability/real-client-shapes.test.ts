/**
 * Request shapes of public client code tested on a real instrument (the facts of observed-instrument.md, written
 * here in our own code), replayed against the simulator in its default mode: every shape the real instrument
 * accepts, the simulator accepts (issue 10, point 8). The client's own contract tests use the strict mode instead.
 */
import assert from 'node:assert/strict';

import { bearer, Harness, JSON_PATCH, JSON_TYPE, startHarness } from '../simulator/helpers';
import { USER } from '../support/runtime';

/** Every JSON media type the real instrument (an ASP.NET service) reads a body from. */
const MEDIA_TYPES = [JSON_TYPE, JSON_PATCH, 'text/json', 'application/merge-patch+json', 'application/json; charset=utf-8'];

/** Login bodies seen in public clients. */
const LOGIN_BODIES: Record<string, unknown>[] = [
  { Username: USER.username, Password: USER.password },
  { username: USER.username, password: USER.password },
  { userName: USER.username, password: USER.password },
  { USERNAME: USER.username, PASSWORD: USER.password },
];

describe('real-client request shapes against the default simulator (issue 10, point 8)', function () {
  let h: Harness;
  let token: string;

  before(async function () {
    h = await startHarness({ strict: false });
  });
  after(async function () {
    await h.close();
  });
  beforeEach(async function () {
    h.sim.reset();
    token = await h.login();
  });

  function describeRes(res: { status: number; data: unknown }): string {
    return `${res.status} ${JSON.stringify(res.data)}`;
  }

  for (const type of MEDIA_TYPES) {
    for (const body of LOGIN_BODIES) {
      it(`POST authenticate ${JSON.stringify(Object.keys(body))} as ${type}`, async function () {
        const res = await h.a.post('/api/v1/authenticate', JSON.stringify(body), { headers: { 'Content-Type': type } });
        assert.equal(res.status, 200, describeRes(res));
        assert.match(String((res.data as { token?: string }).token), /^eyJ/);
      });
    }
  }

  it('POST renew-token with a PascalCase body as application/json', async function () {
    const res = await h.a.post(
      '/api/v1/authenticate/renew-token',
      { Username: USER.username, Password: USER.password },
      bearer(token, JSON_TYPE),
    );
    assert.equal(res.status, 200, describeRes(res));
  });

  it('POST change-expired-password with a PascalCase body as application/json', async function () {
    h.sim.setUserPasswordExpired(USER.username, true);
    const res = await h.a.post(
      '/api/v1/authenticate/change-expired-password',
      { UserName: USER.username, OldPassword: USER.password, NewPassword: 'n3w-password-x' },
      { headers: { 'Content-Type': JSON_TYPE } },
    );
    assert.equal(res.status, 204, describeRes(res));
  });

  for (const type of MEDIA_TYPES) {
    it(`steps: create, rename, reorder, disable, update with PascalCase bodies as ${type}`, async function () {
      const auth = bearer(token, type);
      const created = await h.a.post('/api/v1/protocols/2/step', { StepType: 'PauseStep', Name: 'wait', Duration: 5 }, auth);
      assert.equal(created.status, 200, describeRes(created));
      const id = (created.data as { id: number }).id;
      const renamed = await h.a.put(`/api/v1/protocols/2/step/rename/${id}`, { NewName: 'wait longer' }, auth);
      assert.equal(renamed.status, 204, describeRes(renamed));
      const reordered = await h.a.put('/api/v1/protocols/2/step/reorder-step', [{ StepId: id, StepOrder: 1 }], auth);
      assert.equal(reordered.status, 204, describeRes(reordered));
      const disabled = await h.a.put(`/api/v1/protocols/2/step/disable/${id}`, { Disabled: true }, auth);
      assert.equal(disabled.status, 204, describeRes(disabled));
      const updated = await h.a.put(
        '/api/v1/protocols/2/step',
        { Id: id, StepType: 'PauseStep', Name: 'again', StepOrder: 1 },
        auth,
      );
      assert.equal(updated.status, 200, describeRes(updated));
    });

    it(`settings and service routines with PascalCase bodies as ${type}`, async function () {
      const auth = bearer(token, type);
      const settings = await h.a.post(
        '/api/v1/settings/software-settings',
        { HideKeyboard: true, GenerateRunReport: false, AllowRedWarningOverride: false, DefaultAmbientTemperature: 21 },
        auth,
      );
      assert.equal(settings.status, 204, describeRes(settings));
      const routines = (await h.a.get('/api/v1/verification/service-routines', bearer(token))).data as { id: number }[];
      const routine = await h.a.put('/api/v1/verification/service-routines', { Id: routines[0].id, IsRecommended: true }, auth);
      assert.equal(routine.status, 204, describeRes(routine));
    });
  }

  for (const [what, bodyOf] of [
    [
      'camelCase',
      (id: string, groupId: string) => ({
        id,
        groupId,
        selectedResponse: 'Retry',
        errorData: [{ id, selectedResponse: 'Retry' }],
      }),
    ],
    [
      'PascalCase',
      (id: string, groupId: string) => ({
        Id: id,
        GroupId: groupId,
        SelectedResponse: 'Retry',
        ErrorData: [{ Id: id, SelectedResponse: 'Retry' }],
      }),
    ],
  ] as const) {
    it(`PUT errors/runtime for an error without errorData, ${what}, errorData = [{id: the error's id, selectedResponse}]`, async function () {
      const e = h.sim.injectPendingError({ responses: ['Retry', 'Abort'] });
      assert.deepEqual(e.errorData, []);
      const res = await h.a.put('/api/v1/errors/runtime', bodyOf(e.id, e.groupId), bearer(token, JSON_TYPE));
      assert.equal(res.status, 204, describeRes(res));
      assert.equal(h.sim.state.pendingErrors.length, 0, 'the answer was applied');
      const record = (await h.a.get(`/api/v1/errors/${e.id}`, bearer(token))).data as { handled: boolean };
      assert.equal(record.handled, true);
    });
  }

  it('GET errors?offset=0&limit=50', async function () {
    h.sim.injectPendingError();
    const res = await h.a.get('/api/v1/errors?offset=0&limit=50', bearer(token));
    assert.equal(res.status, 200, describeRes(res));
    const list = res.data as { totalItemCount: number; currentOffset: number; items: unknown[] };
    assert.equal(list.totalItemCount, 1);
    assert.equal(list.currentOffset, 0);
    assert.equal(list.items.length, 1);
  });
});

describe('the strict (spec-only) mode stays available', function () {
  let h: Harness;
  before(async function () {
    h = await startHarness({ strict: true });
  });
  after(async function () {
    await h.close();
  });

  it('refuses a media type interfaces.md does not name for the operation (415), accepts the named one', async function () {
    const body = JSON.stringify({ username: USER.username, password: USER.password });
    const wrong = await h.a.post('/api/v1/authenticate', body, { headers: { 'Content-Type': JSON_TYPE } });
    assert.equal(wrong.status, 415);
    const right = await h.a.post('/api/v1/authenticate', body, { headers: { 'Content-Type': JSON_PATCH } });
    assert.equal(right.status, 200);
  });
});
