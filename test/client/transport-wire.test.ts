/**
 * What goes on the wire through axios is what the transport writes: a proxy from the environment is never used for an
 * instrument URL, axios adds none of its own headers (User-Agent, Accept-Encoding, a form Content-Type on a bodiless
 * POST), and a query is spelled as the client has always spelled it.
 */
import assert from 'node:assert/strict';
import http from 'http';

import fc from 'fast-check';

import { Transport } from '../../src/client/transport';
import { closeLocal, listenLocal } from '../support/local-server';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function recorder(seen: Seen[]): http.Server {
  return http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.setHeader('Content-Type', 'application/json');
      res.end('{"ok":true}');
    });
  });
}

/** The spelling of a query value the client sent through axios before 0.3.2 and through its own exchange after. */
function spelled(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ':').replace(/%24/g, '$').replace(/%2C/gi, ',').replace(/%20/g, '+');
}

describe('transport: the wire through axios', function () {
  const seen: Seen[] = [];
  const proxied: string[] = [];
  let server: http.Server;
  let proxy: http.Server;
  let url = '';
  let proxyUrl = '';
  const open: Transport[] = [];
  const saved: Record<string, string | undefined> = {};
  const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];

  before(async function () {
    server = recorder(seen);
    url = await listenLocal(server);
    proxy = http.createServer((req, res) => {
      proxied.push(req.url ?? '');
      res.end('{"proxied":true}');
    });
    proxyUrl = await listenLocal(proxy);
  });
  beforeEach(function () {
    seen.length = 0;
    proxied.length = 0;
  });
  afterEach(function () {
    for (const t of open.splice(0)) t.close();
    for (const name of PROXY_VARS) {
      if (!(name in saved)) continue;
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
      delete saved[name];
    }
  });
  after(async function () {
    await closeLocal(server);
    await closeLocal(proxy);
  });

  function transport(): Transport {
    const t = new Transport({ baseUrl: url, retries: 0, timeoutMs: 5000 });
    open.push(t);
    return t;
  }

  function setEnv(name: string, value: string): void {
    if (!(name in saved)) saved[name] = process.env[name];
    process.env[name] = value;
  }

  it('a proxy set in the environment (HTTP_PROXY, http_proxy) is not used: the instrument gets the request', async function () {
    setEnv('HTTP_PROXY', proxyUrl);
    setEnv('http_proxy', proxyUrl);
    setEnv('NO_PROXY', '');
    setEnv('no_proxy', '');
    const res = await transport().request<{ ok: boolean }>({
      api: 'A',
      method: 'GET',
      path: '/x',
      operation: 'get-x',
      idempotent: true,
      token: 't',
    });
    assert.deepEqual(res.data, { ok: true });
    assert.deepEqual(proxied, [], 'nothing went to the proxy');
    assert.equal(seen.length, 1);
  });

  it('axios adds no header of its own: no User-Agent, no Accept-Encoding, no Content-Type without a body', async function () {
    const t = transport();
    await t.request({ api: 'A', method: 'GET', path: '/g', operation: 'get', idempotent: true, token: 'tok' });
    await t.request({ api: 'A', method: 'POST', path: '/p', operation: 'pause', idempotent: false, token: 'tok' });
    await t.request({ api: 'A', method: 'PUT', path: '/u', operation: 'put', idempotent: true, token: 'tok', body: { a: 1 } });
    const [get, post, put] = seen;
    for (const r of seen) {
      assert.equal(r.headers['user-agent'], undefined, `${r.method}: User-Agent`);
      assert.equal(r.headers['accept-encoding'], undefined, `${r.method}: Accept-Encoding`);
      assert.equal(r.headers.accept, 'application/json', `${r.method}: Accept`);
      assert.equal(r.headers.authorization, 'Bearer tok');
    }
    assert.equal(get.headers['content-type'], undefined);
    assert.equal(post.headers['content-type'], undefined, 'a bodiless POST carries no form type');
    assert.equal(post.headers['content-length'], '0', 'as Node writes a bodiless POST');
    assert.equal(post.body, '');
    assert.equal(put.headers['content-type'], 'application/json');
    assert.equal(put.body, '{"a":1}', 'the body as JSON.stringify wrote it, not re-serialised');
    assert.equal(put.headers['content-length'], '7');
  });

  it('property: a query is spelled as before (axios’s spelling) and read back as sent', async function () {
    const t = transport();
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,10}$/), fc.oneof(fc.string({ maxLength: 12 }), fc.integer())),
        async (query) => {
          seen.length = 0;
          await t.request({ api: 'A', method: 'GET', path: '/q', operation: 'list', idempotent: true, query });
          const keys = Object.keys(query);
          const expected =
            keys.length === 0
              ? '/api/v1/q'
              : `/api/v1/q?${keys.map((k) => `${spelled(k)}=${spelled(String(query[k]))}`).join('&')}`;
          assert.equal(seen[0].url, expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
