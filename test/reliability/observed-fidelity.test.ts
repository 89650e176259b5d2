/**
 * Issue 17.8: real-instrument fidelity. The client sends what the hardware-tested public client sends (dialog
 * answers with text ids and `viewInput: ""`, no Content-Type without a body, the simulation speed as text), checked
 * at the simulator's request log; the simulator's default (lenient) mode accepts and sends what that client meets on
 * hardware, and its strict mode keeps the specification's rules. Properties over generated inputs and operations.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';
import { WebSocket } from 'ws';

import { eventSocketUrl } from '../../src/client';
import { closeViewBody } from '../../src/client/dialogs';
import { bearer, Harness, JSON_PATCH, startHarness } from '../simulator/helpers';
import { pauseResumeAbort, useClients } from '../support/client-suite';
import { until } from '../support/until';

type Body = Record<string, unknown>;

describe('fidelity: what the client sends (issue 17.8)', function () {
  const suite = useClients({ strict: false });
  const sim = suite.sim;

  it('answers a dialog with the view id as text and viewInput "" when there is none', async function () {
    const c = suite.make();
    const box = sim.openMessageBox({ title: 'Door open', buttons: ['Ok', 'Cancel'] });
    await c.dialogs.closeView({ viewId: box.viewId, viewResult: 'ok' });
    const sent = sim.requests.filter((r) => r.path === '/api/v1/maintenance/close-view');
    assert.deepEqual(
      sent.map((r) => r.body),
      [{ viewId: box.viewId, viewResult: 'Ok', viewInput: '' }],
    );
    assert.deepEqual(closeViewBody({ viewId: 7, viewResult: 'Yes' }), { viewId: '7', viewResult: 'Yes', viewInput: '' });
  });

  it('property: whatever the view id and input, the body has a text id and a text input, never null', function () {
    const viewId = fc.oneof(fc.nat({ max: 2 ** 31 }), fc.stringMatching(/^[\x21-\x7e]{1,20}$/));
    const input = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string({ maxLength: 50 }),
      fc.integer(),
      fc.boolean(),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(viewId, fc.constantFrom('Ok', 'yes', 'NO', 'Cancel', 'abort'), input, (id, result, viewInput) => {
        const body = closeViewBody({ viewId: id, viewResult: result, viewInput });
        assert.equal(typeof body.viewId, 'string');
        assert.equal(body.viewId, String(id).trim());
        assert.equal(typeof body.viewInput, 'string');
        if (viewInput === undefined || viewInput === null) assert.equal(body.viewInput, '');
        else if (typeof viewInput === 'string') assert.equal(body.viewInput, viewInput);
        else assert.deepEqual(JSON.parse(body.viewInput), JSON.parse(JSON.stringify(viewInput)));
      }),
      { numRuns: 500 },
    );
  });

  it('sends pause, resume, abort and cleanup without a body and without a Content-Type', async function () {
    const c = suite.make();
    await c.runs.setSimulationSpeed(100);
    await pauseResumeAbort(c);
    await until(async () => (await c.runs.status()).protocolRunState === 'Idle', 'Idle', 20000);
    await c.runs.cleanupUnloading().catch(() => undefined); // the instrument may refuse it when nothing is loaded
    const bodyless = sim.requests.filter((r) => /\/protocol-run\/(pause|resume|abort|cleanup-unloading)$/.test(r.path));
    assert.deepEqual(
      bodyless.map((r) => r.path.split('/').pop()),
      ['pause', 'resume', 'abort', 'cleanup-unloading'],
    );
    for (const r of bodyless) {
      assert.equal(r.contentType, undefined, `${r.path} carried Content-Type ${r.contentType}`);
      assert.equal(r.body, '');
    }
  });

  it('property: over every request the client made, a Content-Type goes with a body and only then', async function () {
    const c = suite.make();
    await c.runs.status();
    await c.runs.pause().catch(() => undefined);
    await c.runs.resume().catch(() => undefined);
    await c.runs.abort().catch(() => undefined);
    await c.prep.getSoftwareSettings();
    await c.runs.setSimulationSpeed(3);
    await c.prep.pendingErrors();
    assert.ok(sim.requests.length > 5);
    for (const r of sim.requests) {
      const hasBody = r.body !== '' && r.body !== undefined;
      assert.equal(
        r.contentType !== undefined,
        hasBody,
        `${r.method} ${r.path}: Content-Type ${r.contentType}, body ${JSON.stringify(r.body)}`,
      );
    }
  });

  it('reads and writes the simulation speed as text', async function () {
    const c = suite.make();
    await c.runs.setSimulationSpeed('2.5');
    await c.runs.setSimulationSpeed(4);
    const puts = sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/protocol-run/simulation-speed');
    assert.deepEqual(
      puts.map((r) => r.body),
      [{ simulationSpeed: '2.5' }, { simulationSpeed: '4' }],
    );
    assert.equal(await c.runs.simulationSpeed(), '4');
    for (const bad of [0, -1, 'fast', '', '1e3', Number.NaN, null]) {
      await assert.rejects(c.runs.setSimulationSpeed(bad), /simulationSpeed must be a number greater than 0/, String(bad));
    }
  });
});

describe('fidelity: the simulator, lenient (default) and strict (issue 17.8)', function () {
  const harnesses: Record<'lenient' | 'strict', Harness> = {} as Record<'lenient' | 'strict', Harness>;
  before(async function () {
    harnesses.lenient = await startHarness({ strict: false, prefix: '/NimbusLite' });
    harnesses.strict = await startHarness({ strict: true, prefix: '/NimbusLite' });
  });
  after(async function () {
    await harnesses.lenient.close();
    await harnesses.strict.close();
  });
  beforeEach(function () {
    harnesses.lenient.sim.reset();
    harnesses.strict.sim.reset();
  });

  it("renew-token with {}: lenient renews the bearer's user, strict wants the credentials", async function () {
    for (const mode of ['lenient', 'strict'] as const) {
      const h = harnesses[mode];
      const token = await h.login();
      const res = await h.a.post('/api/v1/authenticate/renew-token', {}, bearer(token, JSON_PATCH));
      if (mode === 'lenient') {
        assert.equal(res.status, 200, JSON.stringify(res.data));
        assert.equal(typeof (res.data as Body).token, 'string');
      } else assert.equal(res.status, 400, 'strict: the specification asks for the credentials');
      const noBearer = await h.a.post('/api/v1/authenticate/renew-token', {}, { headers: { 'Content-Type': JSON_PATCH } });
      assert.equal(noBearer.status, 401, `${mode}: never without a valid bearer`);
    }
  });

  it('reads without a token: lenient answers every read of A as hardware does, strict wants a token', async function () {
    const reads = [
      '/api/v1/system-ready',
      '/api/v1/errors/check-for-pending-errors',
      '/api/v1/protocol-run',
      '/api/v1/instruments/global-run-state',
      '/api/v1/settings/software-settings',
      '/api/v1/verification/service-routines',
      '/api/v1/protocols/names',
      '/api/v1/errors?offset=0&limit=50',
    ];
    for (const path of reads) {
      assert.equal((await harnesses.lenient.a.get(path)).status, 200, `lenient ${path}`);
      assert.equal((await harnesses.strict.a.get(path)).status, 401, `strict ${path}`);
      const bad = await harnesses.lenient.a.get(path, { headers: { Authorization: 'Bearer not-a-token' } });
      assert.equal(bad.status, 401, `a bad token is still refused: ${path}`);
    }
    assert.equal(
      (await harnesses.lenient.a.get('/api/v1/authenticate/check-authentication')).status,
      401,
      'check-authentication reports the caller session: none without a token',
    );
    const write = await harnesses.lenient.a.put('/api/v1/errors/clear-errors');
    assert.equal(write.status, 401, 'writes still want a token');
  });

  it('step types without Step: lenient accepts them, strict refuses them', async function () {
    for (const mode of ['lenient', 'strict'] as const) {
      const h = harnesses[mode];
      const token = await h.login();
      const res = await h.a.post(
        '/api/v1/protocols/1/step',
        { stepType: 'Pause', name: 'wait' },
        bearer(token, 'application/json-patch+json'),
      );
      if (mode === 'lenient') {
        assert.equal(res.status, 200, JSON.stringify(res.data));
        assert.equal((res.data as Body).stepType, 'PauseStep');
      } else assert.equal(res.status, 400);
    }
  });

  it('event frames: {code, description, data} in camelCase when lenient, PascalCase when strict', async function () {
    for (const mode of ['lenient', 'strict'] as const) {
      const h = harnesses[mode];
      const ws = new WebSocket(eventSocketUrl(h.sim.baseUrl, 'events'));
      const frame = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString('utf8'))));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      h.sim.openMessageBox({ title: 'Door open', buttons: ['Ok'] });
      const parsed = JSON.parse(await frame) as Body;
      ws.terminate();
      if (mode === 'lenient') {
        assert.deepEqual(Object.keys(parsed), ['code', 'description', 'data']);
        assert.equal(parsed.code, 'messagebox');
        assert.ok('viewId' in (JSON.parse(String(parsed.data)) as Body), 'camelCase inside');
      } else {
        assert.deepEqual(Object.keys(parsed), ['Code', 'Description', 'Data']);
        assert.ok('ViewId' in (JSON.parse(String(parsed.Data)) as Body));
      }
    }
  });
});
