/**
 * The editor endpoints of lh-server never hand a stored secret to an address the user did not deploy, never read
 * another node type's credentials, and refuse the bodies a cross-site HTML form can send.
 */
import assert from 'node:assert/strict';
import http from 'http';

import type { AddressInfo } from 'net';

import { chooseCredentials, isJsonContentType } from '../../src/nodes/lh-server/admin-guard';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode, USER } from '../support/runtime';

type NodeModule = (RED: unknown) => void;
const emailNode = require('node-red-node-email/61-email.js') as NodeModule;

const EMAIL_PASSWORD = 'smtp-secret-93';

interface Seen {
  method: string;
  url: string;
  body: string;
  authorization?: string;
}

/** A stranger's web server: records what reaches it and answers 401 to everything. */
function startListener(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, authorization: req.headers.authorization });
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end('{"title":"Unauthorized"}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        seen,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

describe('admin endpoints: stored secrets stay with their own node (issue 10, point 1)', function () {
  const sim = useInstrument({ adminServer: true });
  let listener: Awaited<ReturnType<typeof startListener>>;

  beforeEach(async function () {
    listener = await startListener();
    const server = serverFlow(sim);
    await helper.load(
      [...packageNodes(), tlsConfigNode, emailNode],
      [...server.nodes, { id: 'mail', type: 'e-mail', server: '127.0.0.1', port: '1', name: 'ops@example.org', wires: [] }],
      { ...server.credentials, mail: { userid: 'ops', password: EMAIL_PASSWORD } },
    );
  });
  afterEach(async function () {
    await listener.close();
  });

  const dialog = (): Record<string, unknown> => ({
    id: 'server',
    baseUrl: sim.baseUrl,
    instrumentUrl: sim.instrumentUrl,
    tls: 'server-tls',
    simulatorCa: false,
    username: USER.username,
    password: '__PWRD__',
  });

  function post(path: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
    return helper
      .request()
      .post(path)
      .send(body)
      .then((res) => ({ status: res.status, body: res.body as Record<string, unknown> }));
  }

  it('Test connection with the deployed addresses uses the stored password', async function () {
    const res = await post('/lh-server/test-connection', dialog());
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.ok, true, JSON.stringify(res.body));
  });

  for (const [what, change] of [
    ['another base URL', (d: Record<string, unknown>, url: string) => ({ ...d, baseUrl: url })],
    [
      'another base URL and no password field',
      (d: Record<string, unknown>, url: string) => ({ ...d, baseUrl: url, password: undefined }),
    ],
    ['another instrument URL', (d: Record<string, unknown>, url: string) => ({ ...d, instrumentUrl: url })],
    ['other TLS settings', (d: Record<string, unknown>) => ({ ...d, tls: '', simulatorCa: true })],
  ] as const) {
    it(`Test connection with ${what} sends the stored password nowhere and says what to do`, async function () {
      sim.clearRequests();
      const res = await post('/lh-server/test-connection', change(dialog(), listener.url));
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(String(res.body.error), /deploy first, or type the password here/);
      assert.deepEqual(listener.seen, [], 'nothing reaches the other address');
      assert.equal(sim.requests.length, 0, 'nothing reaches the instrument either');
    });
  }

  it('Test connection with another URL and a typed password sends only that password', async function () {
    const res = await post('/lh-server/test-connection', {
      ...dialog(),
      baseUrl: listener.url,
      instrumentUrl: '',
      password: 'typed-7',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(listener.seen.length > 0);
    assert.ok(listener.seen.some((r) => r.body.includes('typed-7')));
    assert.ok(listener.seen.every((r) => !r.body.includes(USER.password) && r.authorization === undefined));
  });

  it("an e-mail node's id is refused: its password is never read or sent", async function () {
    const res = await post('/lh-server/test-connection', { ...dialog(), id: 'mail', baseUrl: listener.url, instrumentUrl: '' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(String(res.body.error), /not an lh-server node/);
    assert.doesNotMatch(JSON.stringify(res.body), new RegExp(EMAIL_PASSWORD));
    assert.deepEqual(listener.seen, []);
    const change = await post('/lh-server/mail/change-expired-password', { newPassword: 'n3w-password-x' });
    assert.equal(change.status, 400, JSON.stringify(change.body));
    assert.match(String(change.body.error), /not an lh-server node/);
    assert.equal(sim.requests.length, 0);
  });

  for (const [type, text] of [
    ['application/x-www-form-urlencoded', `id=server&baseUrl=${encodeURIComponent('http://127.0.0.1:1')}&password=__PWRD__`],
    ['text/plain', JSON.stringify({ id: 'server', password: '__PWRD__' })],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="id"\r\n\r\nserver\r\n--x--\r\n'],
  ]) {
    it(`a cross-site ${type.split(';')[0]} post from a foreign origin is refused (415) before anything is done`, async function () {
      sim.clearRequests();
      for (const path of ['/lh-server/test-connection', '/lh-server/server/change-expired-password']) {
        const body = path.includes('change')
          ? 'newPassword=n3w-password-x'
          : text.replace('http%3A%2F%2F127.0.0.1%3A1', encodeURIComponent(listener.url));
        const res = await helper.request().post(path).set('Origin', 'http://evil.example').set('Content-Type', type).send(body);
        assert.equal(res.status, 415, `${path}: ${res.status} ${res.text}`);
      }
      assert.deepEqual(listener.seen, []);
      assert.equal(sim.requests.length, 0);
    });
  }

  it('change-expired-password still works from the dialog (JSON), with the stored user and password', async function () {
    sim.setUserPasswordExpired(USER.username, true);
    const res = await post('/lh-server/server/change-expired-password', { newPassword: 'n3w-password-x' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = sim.requests.find((r) => r.path === '/api/v1/authenticate/change-expired-password');
    assert.deepEqual(sent?.body, { userName: USER.username, oldPassword: USER.password, newPassword: 'n3w-password-x' });
  });
});

describe('admin guard decisions', function () {
  const target = { baseUrl: 'http://a:1/x', instrumentUrl: 'https://b:2', tls: 't', simulatorCa: false };
  const deployed = { target, credentials: { username: 'u', password: 'stored-1', instrumentToken: 'tok-1' } };
  const dialog = { baseUrl: 'HTTP://A:1/x/', instrumentUrl: 'https://b:2', tls: 't', username: 'u', password: '__PWRD__' };

  it('accepts application/json only', function () {
    assert.equal(isJsonContentType('application/json; charset=utf-8'), true);
    for (const t of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
      undefined,
      'application/jsonx',
    ])
      assert.equal(isJsonContentType(t), false, String(t));
  });

  it('uses stored secrets only for the same normalised addresses and TLS settings', function () {
    assert.deepEqual(chooseCredentials(dialog, deployed), {
      ok: true,
      usesStored: true,
      credentials: { username: 'u', password: 'stored-1', instrumentToken: 'tok-1' },
    });
    assert.equal(chooseCredentials({ ...dialog, baseUrl: 'http://a:1/y' }, deployed).ok, false);
    assert.equal(chooseCredentials({ ...dialog, tls: '' }, deployed).ok, false);
    assert.equal(chooseCredentials({ ...dialog, password: 'typed', instrumentToken: '' }, undefined).ok, true);
    assert.equal(chooseCredentials(dialog, undefined).ok, false, 'a placeholder with nothing deployed');
  });
});
