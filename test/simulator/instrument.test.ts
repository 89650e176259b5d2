import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';

import { AxiosRequestConfig } from 'axios';

import { bearer, describeStatus, JSON_TYPE, problemOf, useLoggedInHarness, VECTOR } from './helpers';

interface Wrapper<T> {
  data: T | null;
  message: string | null;
  success: boolean;
}
interface ErrorData {
  uuid: string;
  title: string;
  message: string;
  severity: string;
  date: string;
  source: string;
  actions: { id: number; description: string; isRecovery: boolean; isDefault: boolean; inputs?: { id: number }[] }[];
  defaultActionId: number;
  timeoutSeconds: number;
}

describe('simulator: interface B, runtime error handling (4.5)', function () {
  const h = useLoggedInHarness({ instrumentTokens: ['static-instrument-token'] });
  const V3 = '/api/vector/v3';

  const auth = (contentType?: string): AxiosRequestConfig => bearer(h.token, contentType);
  const register = (key: string) => h.b.post(`${V3}/error-handler`, JSON.stringify(key), auth(VECTOR));
  const recovery = (uuid: string, body: Record<string, unknown>, kind = 'recovery') =>
    h.b.post(`${V3}/instrument-errors/${uuid}/${kind}`, body, auth(VECTOR));
  const submission = (uuid: string, selectedActionId: number, key: string | null = 'lab1') => ({
    date: new Date().toISOString(),
    uuid,
    detailedErrorRecoveries: null,
    inputs: null,
    selectedActionId,
    selectedActionIsRecovery: true,
    errorHandlingKey: key,
  });

  it('serves HTTPS with a certificate signed by sim.ca and the versioned media type', async function () {
    const res = await h.b.get(`${V3}/error-handler`, auth());
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], VECTOR);
    assert.equal(res.data, false);
  });

  it('registers, reports and unregisters an error handler', async function () {
    const reg = await register('lab1');
    assert.equal(reg.status, 200, describeStatus(reg));
    assert.equal(reg.data, 'Error handler registration successful');
    assert.equal((await h.b.get(`${V3}/error-handler`, auth())).data, true);
    assert.ok(h.sim.state.handlers.has('lab1'));
    const unreg = await h.b.delete(`${V3}/error-handler`, { ...auth(VECTOR), data: JSON.stringify('lab1') });
    assert.equal(unreg.status, 200);
    assert.equal(unreg.data, 'Error handler unregistration successful');
    assert.equal((await h.b.get(`${V3}/error-handler`, auth())).data, false);
    const again = await h.b.delete(`${V3}/error-handler`, { ...auth(VECTOR), data: JSON.stringify('lab1') });
    assert.equal(again.status, 404);
  });

  it('rejects keys that are not letters and digits, bodies that are not a JSON string, and wrong media types', async function () {
    for (const key of ['lab 1', 'lab-1', '']) {
      const res = await register(key);
      assert.equal(res.status, 400, `key '${key}'`);
      problemOf(res);
    }
    assert.equal((await h.b.post(`${V3}/error-handler`, { key: 'lab1' }, auth(VECTOR))).status, 400);
    assert.equal((await h.b.post(`${V3}/error-handler`, JSON.stringify('lab1'), auth(JSON_TYPE))).status, 415);
    assert.equal(
      (await h.b.post(`${V3}/error-handler`, JSON.stringify('lab1'), auth('application/json; x-api-version=2.0'))).status,
      415,
    );
    assert.equal(h.sim.state.handlers.size, 0);
  });

  it('lists unhandled errors in the wrapper with the ErrorData shape', async function () {
    const e = h.sim.injectInstrumentError({ title: 'Clot detected' });
    const res = await h.b.get(`${V3}/instrument-errors/unhandled`, auth());
    assert.equal(res.status, 200);
    const w = res.data as Wrapper<ErrorData[]>;
    assert.equal(w.success, true);
    assert.equal(w.message, null);
    assert.equal(w.data?.length, 1);
    const d = (w.data as ErrorData[])[0];
    assert.equal(d.uuid, e.uuid);
    assert.equal(d.title, 'Clot detected');
    assert.equal(d.source, 'Instrument');
    assert.ok(d.actions.some((a) => a.isRecovery) && d.actions.some((a) => !a.isRecovery));
    assert.ok(d.actions.some((a) => a.id === d.defaultActionId && a.isDefault));
    assert.ok(!('handled' in d), 'only ErrorData fields are served');
  });

  it('accepts a recovery exactly once from a registered handler', async function () {
    await register('lab1');
    const e = h.sim.injectInstrumentError();
    const res = await recovery(e.uuid, submission(e.uuid, 1));
    assert.equal(res.status, 200);
    assert.deepEqual(res.data, { data: e.uuid, message: 'Recovery accepted', success: true });
    const unhandled = (await h.b.get(`${V3}/instrument-errors/unhandled`, auth())).data as Wrapper<ErrorData[]>;
    assert.deepEqual(unhandled.data, []);
    const second = await recovery(e.uuid, submission(e.uuid, 1));
    assert.equal(second.status, 200);
    assert.equal((second.data as Wrapper<string>).success, false);
    assert.match(String((second.data as Wrapper<string>).message), /already been handled/);
    const stored = h.sim.state.instrumentErrors.find((x) => x.uuid === e.uuid);
    assert.equal(stored?.acceptedSubmissions, 1);
    assert.equal(stored?.handledBy, 'lab1');
  });

  it('refuses (success false) without a registered key, for an unknown uuid, for an action that is not a recovery', async function () {
    const e = h.sim.injectInstrumentError();
    const noHandler = (await recovery(e.uuid, submission(e.uuid, 1, 'ghost'))).data as Wrapper<string>;
    assert.equal(noHandler.success, false);
    assert.equal(noHandler.data, null);
    assert.match(String(noHandler.message), /ghost/);
    await register('lab1');
    const unknown = randomUUID();
    const missing = (await recovery(unknown, submission(unknown, 1))).data as Wrapper<string>;
    assert.equal(missing.success, false);
    const notRecovery = (await recovery(e.uuid, submission(e.uuid, 4))).data as Wrapper<string>;
    assert.equal(notRecovery.success, false);
    assert.match(String(notRecovery.message), /offered/);
    assert.equal(h.sim.state.instrumentErrors[0].handled, false);
    const action = (await recovery(e.uuid, submission(e.uuid, 4), 'action')).data as Wrapper<string>;
    assert.equal(action.success, true);
  });

  it('checks inputs against the selected action', async function () {
    await register('lab1');
    const e = h.sim.injectInstrumentError();
    const bad = await recovery(e.uuid, { ...submission(e.uuid, 2), inputs: [{ id: 9, value: '3' }] });
    assert.equal(bad.status, 400);
    const ok = await recovery(e.uuid, { ...submission(e.uuid, 2), inputs: [{ id: 1, value: '3' }] });
    assert.equal((ok.data as Wrapper<string>).success, true);
  });

  it('checks a required input, its type and range; an error with details takes detailed recoveries checked per detail', async function () {
    await register('lab1');
    const e = h.sim.injectInstrumentError();
    const missing = await recovery(e.uuid, { ...submission(e.uuid, 2), inputs: null });
    assert.equal(missing.status, 400);
    assert.match(JSON.stringify(problemOf(missing)), /Input 1 \(Aspiration height above bottom \(mm\)\) is required by action 2/);
    const high = await recovery(e.uuid, { ...submission(e.uuid, 2), inputs: [{ id: 1, value: '11' }] });
    assert.equal(high.status, 400);
    assert.match(JSON.stringify(problemOf(high)), /must be a number from 0\.5 to 10/);
    assert.equal(h.sim.state.instrumentErrors[0].handled, false);

    const detail = randomUUID();
    const d = h.sim.injectInstrumentError({
      details: [
        {
          uuid: detail,
          title: 'Channel 2',
          message: 'clot',
          actions: [{ id: 1, description: 'Retry', isRecovery: true, isDefault: true }],
        },
      ],
    });
    const listed = (await h.b.get(`${V3}/instrument-errors/unhandled`, auth())).data as Wrapper<
      (ErrorData & { details?: { uuid: string }[] })[]
    >;
    assert.equal(listed.data?.find((x) => x.uuid === d.uuid)?.details?.[0].uuid, detail);
    const stranger = await recovery(d.uuid, {
      ...submission(d.uuid, 1),
      detailedErrorRecoveries: [
        { date: new Date().toISOString(), uuid: randomUUID(), inputs: [], selectedActionId: 1, selectedActionIsRecovery: true },
      ],
    });
    assert.equal(stranger.status, 400);
    const ok = await recovery(d.uuid, {
      ...submission(d.uuid, 1),
      detailedErrorRecoveries: [
        { date: new Date().toISOString(), uuid: detail, inputs: [], selectedActionId: 1, selectedActionIsRecovery: true },
      ],
    });
    assert.equal((ok.data as Wrapper<string>).success, true);
    assert.deepEqual(h.sim.state.instrumentErrors.find((x) => x.uuid === d.uuid)?.detailedRecoveries, [
      { uuid: detail, selectedActionId: 1, inputs: [] },
    ]);
  });

  it('400 for a path that is not a uuid or a body uuid that differs; 415 without the version parameter', async function () {
    await register('lab1');
    const e = h.sim.injectInstrumentError();
    assert.equal((await recovery('not-a-uuid', submission(e.uuid, 1))).status, 400);
    const differs = await recovery(e.uuid, submission(randomUUID(), 1));
    assert.equal(differs.status, 400);
    problemOf(differs);
    const noVersion = await h.b.post(`${V3}/instrument-errors/${e.uuid}/recovery`, submission(e.uuid, 1), auth(JSON_TYPE));
    assert.equal(noVersion.status, 415);
    assert.equal(h.sim.state.instrumentErrors[0].acceptedSubmissions, 0);
  });

  it('needs a token: A JWTs and the static instrument tokens work, nothing else', async function () {
    const none = await h.b.get(`${V3}/error-handler`);
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    assert.equal((await h.b.get(`${V3}/error-handler`, bearer('static-instrument-token'))).status, 200);
    assert.equal((await h.b.get(`${V3}/error-handler`, bearer('other'))).status, 401);
    assert.equal(
      (await h.a.get('/api/v1/errors', bearer('static-instrument-token'))).status,
      401,
      'static tokens are for B only',
    );
  });

  it('unknown B paths are 404', async function () {
    assert.equal((await h.b.get(`${V3}/nothing-here`, auth())).status, 404);
  });
});
