/**
 * README "Security": "With `adminAuth` the permission check needs the editor's token, which another site cannot have."
 * Not so when adminAuth has a default user (`adminAuth.default: { permissions: 'read' }`, Node-RED's documented
 * anonymous read access): Node-RED lets every request without a token in as that user, the editor app grants every
 * origin (`Access-Control-Allow-Origin: *`), and the cross-site and DNS-rebinding checks were skipped whenever
 * adminAuth was set. Any web page a lab user visited could read the instrument's protocols, service routines and
 * the metrics through the stored instrument credentials. Every route of the package, called in a real Node-RED
 * (red.js) with adminAuth: anonymous from a foreign page or a rebound name is refused and nothing reaches the
 * instrument; anonymous from the editor's own origin reads; a read-only user cannot write; a logged-in user is served.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { requestText, TextResponse } from '../support/http-text';
import { adminPasswordHash, type RedProcess, startRedProcess } from '../support/red-process';
import { startSimulator } from '../support/runtime';

const PASSWORD = 'admin-pass-7';

interface Route {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  write: boolean;
}

const ROUTES: Route[] = [
  { method: 'GET', path: '/lh-server/server/service-routines', write: false },
  { method: 'GET', path: '/lh-server/server/protocols/2/steps', write: false },
  { method: 'GET', path: '/lh-server/step-types', write: false },
  { method: 'GET', path: '/lh/metrics', write: false },
  { method: 'POST', path: '/lh-server/test-connection', body: { id: 'server', password: '__PWRD__' }, write: true },
  { method: 'POST', path: '/lh-server/server/change-expired-password', body: { newPassword: 'n3w-Password!' }, write: true },
  { method: 'POST', path: '/lh-server/server/setup-wizard', body: {}, write: true },
  { method: 'POST', path: '/lh-server/server/kba-password-reset', body: {}, write: true },
];

describe('admin routes with adminAuth and an anonymous default user (real Node-RED, red.js)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let red: RedProcess | undefined;
  let port: number;
  const tokens: Record<string, string> = {};

  function call(route: Route, headers: Record<string, string> = {}, token?: string): Promise<TextResponse> {
    const data = route.body === undefined ? undefined : JSON.stringify(route.body);
    return requestText(
      `http://127.0.0.1:${port}${route.path}`,
      {
        method: route.method,
        headers: {
          ...(data ? { 'Content-Type': 'application/json' } : {}),
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
      },
      data,
    );
  }

  before(async function () {
    sim = await startSimulator();
    port = await freePort();
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
      credentials: { server: { username: 'admin', password: 'labwire' } },
      prefix: 'lh-anon-',
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [
            { username: 'admin', password: adminPasswordHash(PASSWORD), permissions: '*' },
            { username: 'reader', password: adminPasswordHash(PASSWORD), permissions: 'read' },
          ],
          default: { permissions: 'read' },
        },
      },
    });
    for (const [username, scope] of [
      ['admin', '*'],
      ['reader', 'read'],
    ]) {
      const res = await requestText(
        `http://127.0.0.1:${port}/auth/token`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' } },
        JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password: PASSWORD }),
      );
      assert.equal(res.status, 200, res.text);
      tokens[username] = (JSON.parse(res.text) as { access_token: string }).access_token;
    }
  });

  after(async function () {
    await red?.stop();
    await sim?.stop();
  });

  const foreign: Record<string, Record<string, string>> = {
    'a foreign page (Sec-Fetch-Site)': { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
    'a foreign page (Origin only)': { Origin: 'http://evil.example' },
    'a foreign page with a made-up bearer token': {
      Origin: 'http://evil.example',
      'Sec-Fetch-Site': 'cross-site',
      Authorization: 'Bearer not-a-real-token',
    },
    'a page that rebinds its own name to this Node-RED': {
      Host: 'rebind.attacker.example',
      Origin: 'http://rebind.attacker.example',
      'Sec-Fetch-Site': 'same-origin',
    },
  };

  for (const route of ROUTES) {
    it(`${route.method} ${route.path}: refused to anonymous foreign pages, nothing sent to the instrument`, async function () {
      sim.clearRequests();
      for (const [who, headers] of Object.entries(foreign)) {
        const res = await call(route, headers);
        assert.ok(res.status === 401 || res.status === 403, `${who}: ${res.status} ${res.text}`);
        assert.doesNotMatch(res.text, /lh_instrument_up|"name"|PauseStep/, who);
      }
      assert.equal(sim.requests.length, 0, 'a refused request never reaches the instrument');
    });

    it(`${route.method} ${route.path}: ${route.write ? 'refused to anonymous and read-only users' : 'read by anonymous from the editor itself'}, served to the admin`, async function () {
      const editor = { Host: `127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin' };
      const anonymous = await call(route, editor);
      const reader = await call(route, editor, tokens.reader);
      if (route.write) {
        assert.equal(anonymous.status, 401, anonymous.text);
        assert.equal(reader.status, 401, reader.text);
      } else {
        assert.equal(anonymous.status, 200, anonymous.text);
        assert.equal(reader.status, 200, reader.text);
      }
      // a logged-in user's editor (its bearer token) is served, whatever the browser says of the page
      const admin = await call(route, editor, tokens.admin);
      assert.ok(admin.status !== 401 && admin.status !== 403, `${admin.status} ${admin.text}`);
    });
  }
});
