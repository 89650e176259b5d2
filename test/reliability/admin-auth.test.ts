/**
 * With adminAuth switched on in a real Node-RED (red.js in a child process, this repository as nodesDir), the
 * package's editor endpoints refuse requests without a valid admin token and answer with one.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { requestText, TextResponse } from '../support/http-text';
import { adminPasswordHash, type RedProcess, startRedProcess } from '../support/red-process';
import { startSimulator } from '../support/runtime';

const ADMIN_PASSWORD = 'admin-pass-7';

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

describe('admin endpoints with adminAuth (real Node-RED, red.js)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let red: RedProcess | undefined;
  let url: string;
  let token: string;

  before(async function () {
    sim = await startSimulator();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const flows = [
      {
        id: 'server',
        type: 'lh-server',
        name: 'sim',
        baseUrl: sim.baseUrl,
        instrumentUrl: '',
        clientKey: 'nodered1',
        timeout: 3000,
      },
    ];
    red = await startRedProcess({
      port,
      flows,
      prefix: 'lh-adminauth-',
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'admin', password: adminPasswordHash(ADMIN_PASSWORD), permissions: '*' }],
        },
      },
    });
    const res = await call('POST', `${url}/auth/token`, {
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: ADMIN_PASSWORD,
    });
    assert.equal(res.status, 200, res.text);
    token = (JSON.parse(res.text) as { access_token: string }).access_token;
  });

  after(async function () {
    await red?.stop();
    await sim.stop();
  });

  const endpoints: { method: string; path: string; body?: unknown }[] = [
    {
      method: 'POST',
      path: '/lh-server/test-connection',
      body: { id: 'server', baseUrl: 'http://127.0.0.1:1', username: 'admin', password: '__PWRD__' },
    },
    { method: 'POST', path: '/lh-server/server/change-expired-password', body: { newPassword: 'n3w-password' } },
    { method: 'GET', path: '/lh-server/server/protocols/2/steps' },
    { method: 'GET', path: '/lh-server/server/service-routines' },
    { method: 'GET', path: '/lh-server/step-types' },
  ];

  for (const e of endpoints) {
    it(`${e.method} ${e.path}: 401 without a token, 401 with a forged one, answered with a valid one`, async function () {
      sim.clearRequests();
      const none = await call(e.method, `${url}${e.path}`, e.body);
      assert.equal(none.status, 401, none.text);
      const forged = await call(e.method, `${url}${e.path}`, e.body, 'not-a-real-token');
      assert.equal(forged.status, 401, forged.text);
      assert.equal(sim.requests.length, 0, 'a refused request never reaches the instrument');
      const ok = await call(e.method, `${url}${e.path}`, e.body, token);
      assert.notEqual(ok.status, 401, ok.text);
      assert.notEqual(ok.status, 403, ok.text);
      assert.ok(ok.status === 200 || ok.status === 400 || ok.status === 502, `${ok.status} ${ok.text}`);
      if (e.path === '/lh-server/step-types') assert.ok((JSON.parse(ok.text) as string[]).includes('PauseStep'));
    });
  }
});
