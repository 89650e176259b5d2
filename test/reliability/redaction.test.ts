/**
 * No secret in any text that leaves a node (issue 10, point 4): an instrument that echoes the request (the
 * password of a login, the Authorization header) puts neither into msg.error, the Error given to Catch nodes,
 * the status or a log line. Plus the redaction step itself, as a pure function.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { inspect } from 'util';

import type { AddressInfo } from 'net';

import { LhError } from '../../src/client';
import { redactError, redactText, redactValue } from '../../src/contract/redaction';
import { builtNode } from '../support/node-suite';
import { helper, nextMessage, startServer, stopServer, tlsConfigNode, USER } from '../support/runtime';

const PASSWORD = USER.password;
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}/;

function fakeJwt(): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ nameid: 'ab12', exp: Math.floor(Date.now() / 1000) + 3600 })}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
}

/** An instrument that answers 400 with everything it received (body and Authorization header); logins work when asked. */
function startEcho(loginWorks: boolean): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const token = fakeJwt();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (loginWorks && req.method === 'POST' && /\/authenticate$/.test(req.url ?? '')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            userName: USER.username,
            userId: 'ab12',
            token,
            expiresIn: 60,
            inactiveLogout: 60,
            logoutCountdown: 10,
          }),
        );
        return;
      }
      const auth = req.headers.authorization ?? '';
      res.writeHead(400, { 'Content-Type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          title: 'Bad Request',
          detail: `could not process ${body} (Authorization: ${auth})`,
          request: { headers: { authorization: auth }, body, url: `http://${USER.username}:${PASSWORD}@instrument/` },
        }),
      );
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        token,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    );
  });
}

type Msg = Record<string, unknown>;

describe('redaction: an instrument that echoes the request (issue 10, point 4)', function () {
  let echo: Awaited<ReturnType<typeof startEcho>> | undefined;
  const texts: string[] = [];

  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    await echo?.close();
    echo = undefined;
    texts.length = 0;
  });

  /** Loads lh-server (at the echo), lh-settings with a Catch node, and lh-error-poll; records every status and log line. */
  async function load(loginWorks: boolean): Promise<void> {
    echo = await startEcho(loginWorks);
    await helper.load(
      [tlsConfigNode, builtNode('lh-server'), builtNode('lh-settings'), builtNode('lh-error-poll')],
      [
        { id: 'server', type: 'lh-server', baseUrl: echo.url, instrumentUrl: '', clientKey: 'k1', timeout: 3000 },
        { id: 'settings', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, wires: [[], [], []] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['settings'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { server: { ...USER } },
    );
    for (const id of ['server', 'settings', 'poll']) {
      const node = helper.getNode(id);
      for (const method of ['status', 'log', 'warn', 'error'])
        node.on(`call:${method}`, (call: { args: unknown[] }) =>
          texts.push(`${id} ${method}: ${inspect(call.args, { depth: 8 })}`),
        );
    }
  }

  async function caughtFailure(): Promise<Msg> {
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({ payload: null });
    return caught;
  }

  function assertNoSecret(what: string, text: string, secret: string | RegExp): void {
    const found = typeof secret === 'string' ? text.includes(secret) : secret.test(text);
    assert.ok(!found, `${what} holds a secret:\n${text}`);
  }

  it('an echoed login body puts the password into no msg.error, Error, status or log line', async function () {
    await load(false);
    const msg = await caughtFailure();
    const details = msg._error as Msg;
    // the echo did reach the node: the redacted place holders are there
    assert.match(String(details.message), /\*\*\*/);
    assertNoSecret('msg._error.message', String(details.message), PASSWORD);
    assertNoSecret('msg._error.body', JSON.stringify(details.body), PASSWORD);
    assertNoSecret('msg.error (Error given to done)', inspect(msg.error, { depth: 10 }), PASSWORD);
    assertNoSecret('the whole msg', inspect(msg, { depth: 10 }), PASSWORD);
    // the poll's warning about the same failure, and every status
    const poll = helper.getNode('poll');
    const refused = new Promise<void>((resolve) =>
      poll.on('call:status', (call: { args: Msg[] }) => {
        if (call.args[0]?.fill === 'red') resolve();
      }),
    );
    poll.receive({});
    await refused; // the poll logs its warning (once per problem) before it shows the red status
    assert.ok(
      texts.some((t) => t.startsWith('poll status')),
      texts.join('\n'),
    );
    for (const t of texts) assertNoSecret('a status or log line', t, PASSWORD);
  });

  it('an echoed Authorization header puts the JWT into no msg.error, status or log line', async function () {
    await load(true);
    const msg = await caughtFailure();
    const details = msg._error as Msg;
    assert.match(String(details.message), /Bearer \*\*\*/);
    assertNoSecret('msg._error', inspect(details, { depth: 10 }), JWT_PATTERN);
    assertNoSecret('msg', inspect(msg, { depth: 10 }), JWT_PATTERN);
    assertNoSecret('msg', inspect(msg, { depth: 10 }), echo!.token.split('.')[2]);
    for (const t of texts) assertNoSecret('a status or log line', t, JWT_PATTERN);
  });
});

describe('redaction: Test connection against an echoing instrument', function () {
  let echo: Awaited<ReturnType<typeof startEcho>> | undefined;
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    await echo?.close();
  });

  it('the report shown in the editor holds neither the stored nor a typed password', async function () {
    echo = await startEcho(false);
    await helper.load(
      [tlsConfigNode, builtNode('lh-server')],
      [{ id: 'server', type: 'lh-server', baseUrl: echo.url, instrumentUrl: '', clientKey: 'k1', timeout: 3000 }],
      { server: { ...USER } },
    );
    for (const password of ['__PWRD__', 'typed-7']) {
      const res = await helper
        .request()
        .post('/lh-server/test-connection')
        .send({ id: 'server', baseUrl: echo.url, instrumentUrl: '', username: USER.username, password });
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /\*\*\*/, 'the echo reached the report');
      assert.doesNotMatch(res.text, new RegExp(`${PASSWORD}|typed-7`));
    }
  });
});

describe('redaction step (pure)', function () {
  const jwt = fakeJwt();

  it('takes out the configured secrets in every spelling, bearer tokens, JWTs, userinfo and secret-named fields', function () {
    const secrets = ['pa"ss w/rd'];
    const cases: [string, string][] = [
      ['login failed for pa"ss w/rd', 'login failed for ***'],
      ['{"username":"a","password":"pa\\"ss w/rd"}', '{"username":"a","password":"***"}'],
      ['password=pa%22ss%20w%2Frd&x=1', 'password=***&x=1'],
      [`Authorization: Bearer ${jwt}`, 'Authorization: Bearer ***'],
      [`token ${jwt} end`, 'token *** end'],
      ['Bearer opaque-token.123', 'Bearer ***'],
      ['cannot reach http://admin:hunter22@10.0.0.2/api/v1', 'cannot reach http://***@10.0.0.2/api/v1'],
      ['{"instrumentToken": "static-b-token"}', '{"instrumentToken": "***"}'],
      ['nothing secret here: 404 Not Found', 'nothing secret here: 404 Not Found'],
    ];
    for (const [input, expected] of cases) assert.equal(redactText(input, secrets), expected, input);
  });

  it('does not blank out ordinary words for a very short secret', function () {
    assert.equal(redactText('a timeout', ['a']), 'a timeout');
  });

  it('redacts values deeply, secret-named keys whatever their value, and survives cycles', function () {
    const value: Msg = { a: ['x labwire y', { Password: 'other-9', n: 1 }], token: 'abc', buf: Buffer.from('labwire') };
    value.self = value;
    const out = redactValue(value, ['labwire']);
    assert.deepEqual((out.a as unknown[])[0], 'x *** y');
    assert.deepEqual((out.a as unknown[])[1], { Password: '***', n: 1 });
    assert.equal(out.token, '***');
    assert.equal(out.self, out);
    assert.equal(value.token, 'abc', 'the input is not changed');
  });

  it('redacts an error in place: message, stack and body', function () {
    const err = new LhError('authenticate failed: 400 {"password":"labwire"}', {
      kind: 'http',
      operation: 'authenticate',
      statusCode: 400,
      body: { echo: 'labwire' },
    });
    const same = redactError(err, ['labwire']);
    assert.equal(same, err);
    assert.doesNotMatch(err.message, /labwire/);
    assert.doesNotMatch(String(err.stack), /labwire/);
    assert.deepEqual(err.body, { echo: '***' });
    assert.doesNotMatch(JSON.stringify(err.toMsgError()), /labwire/);
  });
});
