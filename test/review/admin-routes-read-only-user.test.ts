/**
 * README "Security": the editor endpoints use `RED.auth.needsPermission`. With adminAuth, a user who may only read
 * (`permissions: "read"`, Node-RED's read-only editor) may use what the dialogs read (the pickers, the step types, the
 * metrics page), and none of what acts on the instrument or its account: Test connection (a login with a stored or typed
 * password: it counts against the instrument's lockout), change-expired-password, setup-wizard, kba-password-reset.
 * Refused (Node-RED's 401) before anything reaches the instrument, and the stored password never comes back to the reader.
 * A real Node-RED (red.js), the simulator.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { requestText, type TextResponse } from '../support/http-text';
import { adminPasswordHash, type RedProcess, startRedProcess } from '../support/red-process';
import { startSimulator } from '../support/runtime';

const READER_PASSWORD = 'reader-pass-5';
const STORED = 'labwire';

function call(method: string, url: string, body?: unknown, token?: string): Promise<TextResponse> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return requestText(
    url,
    {
      method,
      headers: {
        ...(data ? { 'Content-Type': 'application/json' } : {}),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
    },
    data,
  );
}

describe('review: a read-only editor user and the lh-server endpoints (real Node-RED, red.js)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let red: RedProcess | undefined;
  let url: string;
  let token: string;

  before(async function () {
    sim = await startSimulator();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    red = await startRedProcess({
      port,
      flows: [{ id: 'server', type: 'lh-server', name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: '', clientKey: 'nodered1' }],
      credentials: { server: { username: 'admin', password: STORED } },
      prefix: 'lh-reader-',
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'reader', password: adminPasswordHash(READER_PASSWORD), permissions: 'read' }],
        },
      },
    });
    const res = await call('POST', `${url}/auth/token`, {
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: 'read',
      username: 'reader',
      password: READER_PASSWORD,
    });
    assert.equal(res.status, 200, res.text);
    token = (JSON.parse(res.text) as { access_token: string }).access_token;
  });

  after(async function () {
    await red?.stop();
    await sim?.stop();
  });

  const writes: { path: string; body: unknown }[] = [
    {
      path: '/lh-server/test-connection',
      body: { id: 'server', baseUrl: '', instrumentUrl: '', username: 'admin', password: '__PWRD__' },
    },
    { path: '/lh-server/server/change-expired-password', body: { newPassword: 'n3w-password-1' } },
    { path: '/lh-server/server/setup-wizard', body: {} },
    { path: '/lh-server/server/kba-password-reset', body: {} },
  ];

  for (const w of writes) {
    it(`POST ${w.path}: refused (401/403), nothing reaches the instrument`, async function () {
      const body = w.path.endsWith('test-connection') ? { ...(w.body as object), baseUrl: sim.baseUrl } : w.body;
      sim.clearRequests();
      const res = await call('POST', `${url}${w.path}`, body, token);
      // Node-RED's permission check answers 401 for a user without the permission
      assert.ok(res.status === 401 || res.status === 403, `${res.status} ${res.text}`);
      assert.doesNotMatch(res.text, new RegExp(STORED));
      assert.deepEqual(
        sim.requests.map((r) => `${r.method} ${r.path}`),
        [],
        'a refused request reaches the instrument',
      );
    });
  }

  it('the reads the dialogs make, and the metrics page, answer the reader; no stored secret in them', async function () {
    for (const path of ['/lh-server/step-types', '/lh-server/server/service-routines', '/lh/metrics']) {
      const res = await call('GET', `${url}${path}`, undefined, token);
      assert.equal(res.status, 200, `${path}: ${res.status} ${res.text}`);
      assert.doesNotMatch(res.text, new RegExp(STORED), path);
    }
    // Node-RED's own credentials read: the password stays a flag
    const creds = await call('GET', `${url}/credentials/lh-server/server`, undefined, token);
    if (creds.status === 200) {
      assert.doesNotMatch(creds.text, new RegExp(STORED));
      assert.match(creds.text, /"has_password":true/);
    }
  });
});
