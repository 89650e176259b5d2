/**
 * InstrumentHttp hands each request straight to axios's http adapter, its config prepared once (afcd099). Pinned here
 * against the path it replaced: axios.request() on an instance made with the same options (ReferenceHttp below, the
 * code before afcd099, kept as it was). The bytes on the wire (request line, headers in their order, body), the whole
 * answer, and every rejection (class, code, message) must be the same through both, over http and https, one at a time
 * and many at once, with a proxy in the environment; and nothing of one request may stay behind for the next.
 *
 * The servers are plain `net` / `tls` servers on 127.0.0.1 that record each request's raw bytes and answer with bytes
 * written by hand. axios's own timeout is a socket timer of Node's (not a global setTimeout, so no fake clock reaches
 * it): the timeout test waits for a 100 ms one to fire on a server that never answers.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import fs from 'fs';
import http from 'http';
import https from 'https';
import net from 'net';
import os from 'os';
import path from 'path';
import tls from 'tls';
import zlib from 'zlib';

import axios, { type AxiosInstance, type AxiosResponseHeaders, type RawAxiosResponseHeaders } from 'axios';
import fc from 'fast-check';

import {
  type HttpAnswer,
  type HttpClientOptions,
  type HttpRequest,
  InstrumentHttp,
  isAnswerTooLarge,
} from '../../src/client/http-client';

// --- the path before afcd099, as it was -------------------------------------------------------------------------

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function headersOf(headers: RawAxiosResponseHeaders | AxiosResponseHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string') out[name.toLowerCase()] = value;
    else if (Array.isArray(value)) out[name.toLowerCase()] = value.join(', ');
  }
  return out;
}

/** `git show afcd099^:src/client/http-client.ts`: one axios instance, each request through axios.request(). */
class ReferenceHttp {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly axios: AxiosInstance;

  constructor(options: HttpClientOptions) {
    const { maxSockets } = options;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
    const tlsOptions = options.tls ?? {};
    this.httpsAgent = new https.Agent({
      ...tlsOptions,
      keepAlive: true,
      maxSockets,
      maxFreeSockets: maxSockets,
      scheduling: 'lifo',
      rejectUnauthorized: tlsOptions.rejectUnauthorized !== false,
    });
    this.axios = axios.create({
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      proxy: false,
      responseType: 'arraybuffer',
      transformRequest: [],
      transformResponse: [],
      validateStatus: () => true,
      maxContentLength: options.maxResponseBytes,
      maxBodyLength: options.maxRequestBytes,
      headers: { common: { 'User-Agent': false, 'Accept-Encoding': false } },
    });
  }

  async send(request: HttpRequest): Promise<HttpAnswer> {
    const headers: Record<string, string | false> =
      request.body === undefined && BODY_METHODS.has(request.method)
        ? { ...request.headers, 'Content-Type': false }
        : request.headers;
    const res = await this.axios.request<Buffer>({
      url: request.url,
      method: request.method,
      params: request.query,
      data: request.body,
      headers,
      timeout: request.timeoutMs,
      transport: {
        request: (options: http.RequestOptions, callback: (res: http.IncomingMessage) => void): http.ClientRequest => {
          const req = options.protocol === 'https:' ? https.request(options, callback) : http.request(options, callback);
          request.bind(req);
          return req;
        },
      },
    });
    return {
      status: res.status,
      statusText: res.statusText,
      headers: headersOf(res.headers),
      body: Buffer.isBuffer(res.data) ? res.data : Buffer.from(res.data ?? ''),
    };
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

// --- a server that records raw bytes and answers with raw bytes --------------------------------------------------

type Answerer = (raw: Buffer, socket: net.Socket) => void;

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
const okAnswer: Answerer = (_raw, socket) => void socket.write(OK);

/** Each complete request (head and Content-Length body) recorded as received, then answered by `answer`. */
class RawServer {
  readonly seen: Buffer[] = [];
  connections = 0;
  answer: Answerer = okAnswer;
  port = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  constructor(tlsOptions?: tls.TlsOptions) {
    const onSocket = (socket: net.Socket): void => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      let buf = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
          const total = end + 4 + (length ? Number(length[1]) : 0);
          if (buf.length < total) return;
          const raw = buf.subarray(0, total);
          buf = buf.subarray(total);
          this.seen.push(raw);
          this.answer(raw, socket);
        }
      });
    };
    this.server = tlsOptions ? tls.createServer(tlsOptions, onSocket) : net.createServer(onSocket);
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  reset(): void {
    this.seen.length = 0;
    this.connections = 0;
    this.answer = okAnswer;
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

// --- outcomes ------------------------------------------------------------------------------------------------------

interface ErrorSummary {
  class: string;
  isAxiosError: boolean;
  name: string;
  code: unknown;
  message: string;
  causeCode: unknown;
  status: unknown;
  tooLarge: boolean;
}

type Outcome = { answer: HttpAnswer } | { error: ErrorSummary };

function summary(err: unknown): ErrorSummary {
  const e = err as Error & { code?: unknown; cause?: { code?: unknown }; response?: { status?: unknown } };
  return {
    class: e?.constructor?.name,
    isAxiosError: axios.isAxiosError(e),
    name: e.name,
    code: e.code,
    message: e.message,
    causeCode: e.cause?.code,
    status: e.response?.status,
    tooLarge: isAnswerTooLarge(e),
  };
}

async function outcome(sent: Promise<HttpAnswer>): Promise<Outcome> {
  try {
    return { answer: await sent };
  } catch (err) {
    return { error: summary(err) };
  }
}

function error(o: Outcome): ErrorSummary {
  assert.ok('error' in o, `expected a rejection, got ${JSON.stringify(o)}`);
  return o.error;
}

function answer(o: Outcome): HttpAnswer {
  assert.ok('answer' in o, `expected an answer, got ${JSON.stringify(o)}`);
  return o.answer;
}

const LIMITS = { maxSockets: 4, maxResponseBytes: 64, maxRequestBytes: 64 };

interface Client {
  send(request: HttpRequest): Promise<HttpAnswer>;
  close(): void;
}

/** The head of a raw request, one line each. */
function headLines(raw: string): string[] {
  return raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');
}

function req(url: string, extra: Partial<HttpRequest> = {}): HttpRequest {
  return { url, method: 'GET', headers: { Accept: 'application/json' }, bind: () => undefined, timeoutMs: 5000, ...extra };
}

const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];

/** Runs `fn` with every proxy variable naming a recording proxy (no NO_PROXY); the proxy must see no connection. */
async function withProxyEnv(fn: () => Promise<void>): Promise<void> {
  const proxy = new RawServer();
  const proxyUrl = `http://127.0.0.1:${await proxy.listen()}`;
  const saved = PROXY_VARS.map((v) => process.env[v]);
  try {
    for (const v of PROXY_VARS) delete process.env[v];
    for (const v of PROXY_VARS.slice(0, 4)) process.env[v] = proxyUrl;
    await fn();
    assert.equal(proxy.connections, 0, 'nothing went to the proxy');
  } finally {
    PROXY_VARS.forEach((v, i) => {
      if (saved[i] === undefined) delete process.env[v];
      else process.env[v] = saved[i];
    });
    await proxy.close();
  }
}

// --- the tests -----------------------------------------------------------------------------------------------------

describe('InstrumentHttp: straight to the adapter, as through axios.request()', function () {
  this.timeout(60000);
  const server = new RawServer();
  let base = '';
  const open: Client[] = [];

  function pair(options: Partial<HttpClientOptions> = {}): { ref: ReferenceHttp; now: InstrumentHttp } {
    const ref = new ReferenceHttp({ ...LIMITS, ...options });
    const now = new InstrumentHttp({ ...LIMITS, ...options });
    open.push(ref, now);
    return { ref, now };
  }

  /** The same request through both, one after the other: the raw bytes each sent and what each resolved with. */
  async function through(
    clients: { ref: Client; now: Client },
    request: HttpRequest,
    srv: RawServer = server,
  ): Promise<{ ref: { wire: string[]; out: Outcome }; now: { wire: string[]; out: Outcome } }> {
    const run = async (client: Client): Promise<{ wire: string[]; out: Outcome }> => {
      const from = srv.seen.length;
      const out = await outcome(client.send(request));
      return { wire: srv.seen.slice(from).map((b) => b.toString('latin1')), out };
    };
    const ref = await run(clients.ref);
    const now = await run(clients.now);
    return { ref, now };
  }

  before(async function () {
    base = `http://127.0.0.1:${await server.listen()}`;
  });
  afterEach(function () {
    for (const c of open.splice(0)) c.close();
    server.reset();
  });
  after(async function () {
    await server.close();
  });

  describe('the wire', function () {
    // Header names the transport could send, and a few it never does, in any letter case. Left out: names axios or
    // Node give a meaning of their own to (Content-Length, Host, Connection, Transfer-Encoding), and names equal to a
    // method or `common` or to `constructor` / `prototype` (axios.request()'s merge dropped or moved those: the
    // transport sends Accept, Content-Type and Authorization only).
    const NAMES = ['Authorization', 'Accept', 'Content-Type', 'X-Trace-Id', 'X-Lh-Step', 'User-Agent', 'Accept-Encoding'];
    const VISIBLE = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
    const QUERY_CHARS = [..."aZ0 &=?/#%+:$,[]@!*'()~.-;", 'é', '中', '😀'];

    const name = fc
      .tuple(fc.constantFrom(...NAMES), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }))
      .map(([n, up]) => [...n].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
    const value = fc.string({ unit: fc.constantFrom(...VISIBLE), maxLength: 24 });
    const header = fc.tuple(name, value).map(([n, v]) => [n, n.toLowerCase() === 'authorization' ? `Bearer ${v}` : v]);
    const queryText = (minLength: number): fc.Arbitrary<string> =>
      fc.string({ unit: fc.constantFrom(...QUERY_CHARS), minLength, maxLength: 10 });
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
      body: fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: undefined }),
      headers: fc.array(header, { maxLength: 6 }).map((entries) => Object.fromEntries(entries) as Record<string, string>),
      query: fc.option(fc.dictionary(queryText(1), queryText(0), { maxKeys: 4 }), { nil: undefined }),
      path: fc.array(queryText(0), { maxLength: 3 }).map((segments) => segments.map(encodeURIComponent).join('/')),
    });

    it('random requests: the same bytes as through axios.request(), no User-Agent or Accept-Encoding', async function () {
      // one client of each for the whole run: what one request leaves behind would show in a later one's bytes
      const clients = pair();
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const given = { ...r.headers };
          const sent = req(`${base}/api/${r.path}`, {
            method: r.method,
            headers: r.headers,
            body: r.body,
            query: r.query,
          });
          const { ref, now } = await through(clients, sent);
          assert.equal(ref.wire.length, 1);
          assert.deepEqual(now.wire, ref.wire);
          assert.deepEqual(now.out, ref.out);
          const lines = headLines(now.wire[0]);
          assert.ok(!lines.some((l) => /^(user-agent|accept-encoding):/i.test(l)), now.wire[0]);
          if (r.body === undefined && BODY_METHODS.has(r.method)) {
            assert.ok(!lines.some((l) => /^content-type:/i.test(l)), now.wire[0]);
          }
          // the caller's headers object is left as it was (the transport sends it again on a retry)
          assert.deepEqual(r.headers, given);
        }),
        { numRuns: 200 },
      );
    });

    it("a body without a Content-Type gets axios's form type, as through axios.request()", async function () {
      const clients = pair();
      const cases: Array<Pick<HttpRequest, 'method' | 'body'>> = [
        { method: 'POST', body: '{"a":1}' },
        { method: 'PUT', body: 'x' },
        { method: 'PATCH', body: '' },
        // a method in lower case is not in the transport's no-body list: axios gave it its form type
        { method: 'post', body: undefined },
      ];
      for (const c of cases) {
        const { ref, now } = await through(clients, req(`${base}/form`, { ...c, headers: { Accept: 'text/plain' } }));
        assert.match(ref.wire[0], /\r\nContent-Type: application\/x-www-form-urlencoded\r\n/);
        assert.deepEqual(now.wire, ref.wire, `${c.method} ${JSON.stringify(c.body)}`);
      }
    });

    it("the transport's own requests: Accept, Content-Type, Bearer token; no Content-Type without a body", async function () {
      const clients = pair();
      for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
        for (const body of [undefined, '{"volume":12.5,"name":"é"}']) {
          const headers: Record<string, string> = { Accept: 'application/vnd.lh.v1+json' };
          if (body !== undefined) headers['Content-Type'] = 'application/json';
          headers.Authorization = 'Bearer abc.DEF-123';
          const sent = req(`${base}/api/v1/steps/a%2Fb`, { method, headers, body, query: { filter: 'a b&c', n: '1' } });
          const { ref, now } = await through(clients, sent);
          assert.deepEqual(now.wire, ref.wire);
          const lines = headLines(now.wire[0]);
          assert.equal(lines[0], `${method} /api/v1/steps/a%2Fb?filter=a+b%26c&n=1 HTTP/1.1`);
          assert.equal(
            lines.some((l) => /^content-type:/i.test(l)),
            body !== undefined,
          );
        }
      }
    });

    it('credentials in the URL: the same Basic Authorization in place of the Bearer one', async function () {
      const sent = req(`http://us%20er:p%40ss@127.0.0.1:${server.port}/cred`, {
        headers: { Accept: 'application/json', Authorization: 'Bearer t' },
      });
      const { ref, now } = await through(pair(), sent);
      assert.match(now.wire[0], /\r\nAuthorization: Basic /);
      assert.deepEqual(now, ref);
    });

    it('many requests at once: each sends its own bytes, as one through axios.request() alone', async function () {
      const clients = pair({ maxSockets: 4, maxResponseBytes: 4096 });
      // the answer's body is the request's bytes, so each caller sees what went out for it
      server.answer = (raw, socket) =>
        void socket.write(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${raw.length}\r\n\r\n`), raw]));
      const requests = Array.from({ length: 40 }, (_, i) =>
        req(`${base}/many/${i}`, {
          method: ['GET', 'POST', 'PUT', 'DELETE'][i % 4],
          headers: { Accept: `a/${i}`, ...(i % 3 ? { Authorization: `Bearer t${i}` } : {}), 'X-Id': String(i) },
          body: i % 2 ? `body ${i}` : undefined,
          query: i % 5 ? { i: String(i), s: 'x y' } : undefined,
        }),
      );
      const expected: string[] = [];
      for (const r of requests) expected.push(answer(await outcome(clients.ref.send(r))).body.toString('latin1'));
      const got = await Promise.all(requests.map((r) => clients.now.send(r)));
      assert.deepEqual(
        got.map((a) => a.body.toString('latin1')),
        expected,
      );
    });

    it('a proxy in the environment is not used', async function () {
      await withProxyEnv(async () => {
        const { ref, now } = await through(pair(), req(`${base}/direct`, { query: { a: '1' } }));
        assert.deepEqual(now, ref);
        assert.equal(now.wire.length, 1);
      });
    });
  });

  describe('answers', function () {
    const gz = zlib.gzipSync(Buffer.from('hello through gzip'));
    const df = zlib.deflateSync(Buffer.from('hello through deflate'));
    const ANSWERS: Record<string, Buffer> = {
      'content-length': Buffer.from(
        'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Odd-CASE: v\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n' +
          'Content-Length: 5\r\n\r\nhello',
      ),
      chunked: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'),
      'empty 204': Buffer.from('HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n'),
      '204 that says gzip': Buffer.from('HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n'),
      gzip: Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz]),
      deflate: Buffer.concat([
        Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: ${df.length}\r\n\r\n`),
        df,
      ]),
      '302 not followed': Buffer.from(`HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 5\r\n\r\nmoved`),
      '500 with a body': Buffer.from('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops'),
      'odd reason phrase': Buffer.from('HTTP/1.1 299 Quite  Fine\r\nContent-Length: 0\r\n\r\n'),
      'exactly the limit': Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n${'x'.repeat(64)}`),
    };

    for (const [name, bytes] of Object.entries(ANSWERS)) {
      it(`${name}: the same answer as through axios.request()`, async function () {
        server.answer = (_raw, socket) => void socket.write(bytes);
        const { ref, now } = await through(pair(), req(`${base}/answer`));
        assert.deepEqual(now, ref);
        assert.equal(now.wire.length, 1, 'one request each: nothing followed');
      });
    }

    it('gzip and deflate answers are decoded, as they were through axios.request()', async function () {
      for (const [kind, text] of [
        ['gzip', 'hello through gzip'],
        ['deflate', 'hello through deflate'],
      ]) {
        const bytes = ANSWERS[kind];
        server.answer = (_raw, socket) => void socket.write(bytes);
        const { ref, now } = await through(pair(), req(`${base}/${kind}`));
        for (const o of [ref.out, now.out]) {
          assert.equal(answer(o).body.toString(), text);
          assert.equal(answer(o).headers['content-encoding'], undefined);
        }
      }
    });
  });

  describe('rejections', function () {
    it('connection refused', async function () {
      const closed = new RawServer();
      const port = await closed.listen();
      await closed.close();
      const { ref, now } = await through(pair(), req(`http://127.0.0.1:${port}/x`));
      assert.equal(error(now.out).code, 'ECONNREFUSED');
      assert.deepEqual(now, ref);
    });

    it('the connection reset before the answer, closed mid-answer, reset mid-answer', async function () {
      let sockets: net.Socket[] = [];
      const hold: Answerer = (_raw, socket) => void sockets.push(socket);
      const cases: Array<[string, Answerer, (req: http.ClientRequest) => void]> = [
        ['reset before', (_raw, socket) => void socket.resetAndDestroy(), () => undefined],
        [
          'closed mid-answer',
          (_raw, socket) => {
            socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789');
            socket.end();
          },
          () => undefined,
        ],
        [
          'reset mid-answer',
          (raw, socket) => {
            hold(raw, socket);
            socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789');
          },
          // the reset once the client has the answer's head (not a timed wait)
          (r) => void r.once('response', () => sockets.shift()?.resetAndDestroy()),
        ],
      ];
      for (const [label, answerer, onRequest] of cases) {
        sockets = [];
        server.answer = answerer;
        const { ref, now } = await through(pair(), req(`${base}/reset`, { bind: onRequest }));
        error(ref.out);
        assert.deepEqual(now, ref, label);
      }
    });

    it("axios's timeout (timeoutMs) on a server that never answers", async function () {
      server.answer = () => undefined;
      const { ref, now } = await through(pair(), req(`${base}/silent`, { timeoutMs: 100 }));
      assert.equal(error(now.out).code, 'ECONNABORTED');
      assert.equal(error(now.out).message, 'timeout of 100ms exceeded');
      assert.deepEqual(now, ref);
    });

    it('an answer over maxResponseBytes, with a length and chunked: isAnswerTooLarge knows it', async function () {
      for (const bytes of [
        `HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n${'x'.repeat(65)}`,
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n${'x'.repeat(64)}\r\n1\r\ny\r\n0\r\n\r\n`,
        `HTTP/1.1 404 Not Found\r\nContent-Length: 100\r\n\r\n${'x'.repeat(100)}`,
      ]) {
        server.answer = (_raw, socket) => void socket.write(bytes);
        const { ref, now } = await through(pair(), req(`${base}/big`));
        assert.equal(error(now.out).tooLarge, true);
        assert.deepEqual(now, ref);
      }
    });

    it('a request body over maxRequestBytes: refused before anything is sent', async function () {
      const { ref, now } = await through(pair(), req(`${base}/big`, { method: 'POST', body: 'é'.repeat(33) }));
      assert.equal(error(now.out).message, 'Request body larger than maxBodyLength limit');
      assert.deepEqual(now, ref);
      assert.equal(server.connections, 0);
    });

    it('a header value Node refuses, an unsupported protocol, a URL that does not parse', async function () {
      const clients = pair();
      for (const sent of [
        req(`${base}/h`, { headers: { Authorization: 'Bearer a\r\nX-Evil: 1' } }),
        req(`${base}/h`, { headers: { Authorization: 'Bearer ẞ' } }),
        req(`ftp://127.0.0.1:${server.port}/x`),
        req('http://[::1/x'),
      ]) {
        const { ref, now } = await through(clients, sent);
        assert.deepEqual(now, ref, JSON.stringify(sent.headers) + sent.url);
      }
    });

    describe('destroyed through bind', function () {
      /** One request holds the only socket until released; the server answers the rest at once. */
      function holdFirst(): { release: () => void } {
        let held: net.Socket | undefined;
        server.answer = (raw, socket) => {
          if (raw.toString('latin1').startsWith('GET /hold ')) held = socket;
          else socket.write(OK);
        };
        return { release: () => held?.write(OK) };
      }

      async function destroyQueued(client: Client): Promise<{ wire: string[]; out: Outcome; holder: Outcome }> {
        const { release } = holdFirst();
        const from = server.seen.length;
        const holding = outcome(client.send(req(`${base}/hold`)));
        // the holder is on the wire: its socket is taken
        while (server.seen.length === from) await new Promise((resolve) => setImmediate(resolve));
        let bound!: (r: http.ClientRequest) => void;
        const made = new Promise<http.ClientRequest>((resolve) => (bound = resolve));
        const queued = outcome(client.send(req(`${base}/queued`, { bind: (r) => bound(r) })));
        const r = await made;
        assert.equal(r.socket, null, 'queued behind maxSockets: no socket yet');
        r.destroy(new Error('deadline exceeded'));
        release();
        const holder = await holding;
        const out = await queued;
        return { wire: server.seen.slice(from).map((b) => b.toString('latin1')), out, holder };
      }

      it('while queued behind maxSockets: the same rejection, never written', async function () {
        const ref = await destroyQueued(pair({ maxSockets: 1 }).ref);
        const now = await destroyQueued(pair({ maxSockets: 1 }).now);
        assert.equal(error(now.out).message, 'deadline exceeded');
        assert.deepEqual(now, ref);
        assert.equal(now.wire.length, 1, 'only the holder went out');
      });

      it('in flight, and at once in bind (an attempt already ended)', async function () {
        // in flight: destroyed once the server has the whole request (it never answers)
        let current: http.ClientRequest | undefined;
        server.answer = () => current?.destroy(new Error('closed'));
        const inFlight = (r: http.ClientRequest): void => void (current = r);
        const atOnce = (r: http.ClientRequest): void => void r.destroy(new Error('ended before'));
        const clients = pair();
        for (const [bind, sent] of [
          [inFlight, 1],
          [atOnce, 0],
        ] as const) {
          const { ref, now } = await through(clients, req(`${base}/gone`, { method: 'POST', body: '{}', bind }));
          error(now.out);
          assert.deepEqual(now, ref);
          assert.equal(now.wire.length, sent);
        }
      });
    });
  });

  describe('https', function () {
    let dir = '';
    let cert = '';
    const secure = { server: undefined as unknown as RawServer, base: '' };

    before(async function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-adapter-tls-'));
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem'].concat([
          '-out',
          'cert.pem',
          '-days',
          '2',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ]),
        { cwd: dir, stdio: 'pipe' },
      );
      cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
      secure.server = new RawServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert });
      secure.base = `https://127.0.0.1:${await secure.server.listen()}`;
    });
    afterEach(function () {
      secure.server.reset();
    });
    after(async function () {
      await secure.server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('a self-signed certificate is refused by default, as before, nothing sent', async function () {
      const { ref, now } = await through(pair(), req(`${secure.base}/x`), secure.server);
      assert.equal(error(now.out).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      assert.deepEqual(now, ref);
      assert.equal(now.wire.length, 0);
    });

    it('rejectUnauthorized false, and the certificate as CA: the same bytes and answers', async function () {
      for (const options of [{ rejectUnauthorized: false }, { ca: cert }, { ca: cert, rejectUnauthorized: true }]) {
        const clients = pair({ tls: options });
        const sent = req(`${secure.base}/api/a%20b`, {
          method: 'PUT',
          headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer t' },
          body: '{"x":1}',
          query: { q: 'a/b c' },
        });
        const { ref, now } = await through(clients, sent, secure.server);
        assert.equal(answer(now.out).status, 200);
        assert.deepEqual(now, ref);
      }
    });

    it('a proxy in the environment is not used for an https URL either', async function () {
      await withProxyEnv(async () => {
        const clients = pair({ tls: { rejectUnauthorized: false } });
        const { ref, now } = await through(clients, req(`${secure.base}/direct`), secure.server);
        assert.equal(answer(now.out).status, 200);
        assert.deepEqual(now, ref);
      });
    });

    it('the certificate as CA but a host name it does not name: the same rejection', async function () {
      const clients = pair({ tls: { ca: cert } });
      const { ref, now } = await through(clients, req(`https://localhost:${secure.server.port}/x`), secure.server);
      assert.equal(error(now.out).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.deepEqual(now, ref);
    });
  });

  describe('nothing stays behind', function () {
    it('the template and the common headers are as made after requests of every kind, answered or not', async function () {
      const client = new InstrumentHttp(LIMITS);
      open.push(client);
      const inner = client as unknown as { template: Record<string, unknown>; commonHeaders: { toJSON(): unknown } };
      const shape = (): unknown => {
        const t = inner.template;
        return {
          keys: Reflect.ownKeys(t),
          values: Reflect.ownKeys(t).map((k) => t[k as string]),
          transitional: JSON.stringify(t.transitional),
          env: Reflect.ownKeys((t.env ?? {}) as object),
          common: JSON.stringify(inner.commonHeaders),
          commonKeys: Reflect.ownKeys(inner.commonHeaders),
        };
      };
      const before = shape();
      server.answer = (raw, socket) => {
        if (raw.includes('/silent')) return;
        socket.write('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 2\r\n\r\nok');
      };
      await outcome(
        client.send(
          req(`${base}/a`, {
            method: 'POST',
            body: 'x',
            headers: { 'Content-Type': 'text/plain', Authorization: 'Bearer s' },
            query: { q: '1' },
          }),
        ),
      );
      await outcome(client.send(req(`${base}/silent`, { timeoutMs: 50 })));
      await outcome(client.send(req(`${base}/big`, { method: 'PUT', body: 'x'.repeat(65) })));
      await outcome(client.send(req(`${base}/b`, { method: 'PUT' })));
      assert.deepEqual(shape(), before);
      // and the next plain GET carries nothing of them
      const from = server.seen.length;
      await client.send(req(`${base}/plain`));
      assert.deepEqual(headLines(server.seen[from].toString('latin1')), [
        'GET /plain HTTP/1.1',
        'Accept: application/json',
        `Host: 127.0.0.1:${server.port}`,
        'Connection: keep-alive',
      ]);
    });
  });
});
