/**
 * Every request ends by its own deadline or at close(), whatever the server does: a request queued behind maxSockets,
 * a server that never answers, trickles its headers or its body, a TLS handshake that stalls, a refused connection.
 */
import assert from 'node:assert/strict';
import http from 'http';
import net from 'net';
import { AddressInfo } from 'net';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError } from '../../src/client';
import { AuditHook, AuditOutcome, Transport } from '../../src/client/transport';
import { until } from '../support/until';

interface Seen {
  method: string;
  url: string;
}

/** A server whose answer depends on the path: /hang never answers, /ok answers {} at once. */
async function rawServer(): Promise<{
  url: string;
  seen: Seen[];
  connections: () => number;
  closeIdle: () => void;
  stop: () => Promise<void>;
}> {
  const seen: Seen[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    if (req.url?.includes('/hang')) return;
    if (req.url?.includes('/reset')) return req.socket.destroy();
    if (req.url?.includes('/slow')) return void setTimeout(() => res.end('{}'), 600);
    if (req.url?.includes('/trickle-headers')) {
      // the status line, then a header byte every 50 ms, never the end of the headers
      res.socket?.write('HTTP/1.1 200 OK\r\nX-Slow: ');
      const t = setInterval(() => res.socket?.write('a'), 50);
      res.socket?.once('close', () => clearInterval(t));
      return;
    }
    if (req.url?.includes('/trickle-body')) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100000' });
      res.write('{"a":"');
      const t = setInterval(() => res.write('a'), 50);
      res.socket?.once('close', () => clearInterval(t));
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    connections: () => connections,
    closeIdle: () => server.closeIdleConnections(),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The handles that keep a process busy, by kind: sockets and timers left behind show here. */
function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

/** No more sockets, TLS wraps or timers than before (other files' handles may close meanwhile: fewer is fine). */
function noneLeft(before: Record<string, number>): boolean {
  const now = resources();
  return ['TCPSocketWrap', 'TLSWrap', 'Timeout'].every((kind) => (now[kind] ?? 0) <= (before[kind] ?? 0));
}

async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A TCP server that accepts and never says a word (a TLS handshake that stalls, a dead service behind a port). */
async function silentServer(): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.resume(); // reads (and drops) what comes, so it sees the client's end
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const get = (path: string, minTimeoutMs?: number) =>
  ({ api: 'A', method: 'GET', path, operation: `get ${path}`, idempotent: true, minTimeoutMs }) as const;

/** How a request that must not be answered ended: its error, and how long after it was sent. */
interface Failure {
  err: unknown;
  took: number;
}

async function failureOf(t: Transport, request: Parameters<Transport['request']>[0]): Promise<Failure> {
  const started = Date.now();
  const err = await t.request(request).then(
    () => assert.fail('answered'),
    (e: unknown) => e,
  );
  return { err, took: Date.now() - started };
}

/** The request ended as a timeout at its deadline of 300 ms: not before it, and well before a retry's. */
function assertTimeoutAtDeadline({ err, took }: Failure): void {
  assert.ok(err instanceof LhError);
  assert.equal(err.kind, 'timeout', err.message);
  // the lower bound holds on any machine (a timer never fires early); the upper one is a hang net, 8 deadlines long
  assert.ok(took >= 290 && took < 2500, `ended after ${took} ms`);
}

describe('transport: deadlines and close()', function () {
  let srv: Awaited<ReturnType<typeof rawServer>>;
  const open: Transport[] = [];
  const make = (options: Partial<ConstructorParameters<typeof Transport>[0]> = {}): Transport => {
    const t = new Transport({ baseUrl: srv.url, retries: 0, retryBaseDelayMs: 5, ...options });
    open.push(t);
    return t;
  };

  beforeEach(async function () {
    srv = await rawServer();
  });
  afterEach(async function () {
    for (const t of open.splice(0)) t.close();
    await srv.stop();
  });

  it('a request queued behind maxSockets ends at its own deadline, not when the request holding the socket ends', async function () {
    const t = make({ maxSockets: 1, timeoutMs: 300 });
    let blockerEnded = false;
    const blocker = t
      .request(get('/hang', 10_000))
      .catch((e: unknown) => e)
      .finally(() => (blockerEnded = true));
    const queued = await t.request(get('/ok')).then(
      () => assert.fail('answered'),
      (e: unknown) => e,
    );
    assert.ok(queued instanceof LhError);
    assert.equal(queued.kind, 'timeout');
    // its deadline is 300 ms, the blocker's 10 s: it ended while the blocker still held the socket (an order of
    // events, not a wall-clock bound)
    assert.equal(blockerEnded, false, 'the queued request ended only when the blocker did');
    t.close();
    const ended = await blocker;
    assert.ok(ended instanceof LhError && /closed/.test(ended.message));
    assert.equal(srv.seen.filter((s) => s.url.endsWith('/ok')).length, 0, 'the queued request was never sent');
  });
  it('a write queued behind maxSockets that reached its deadline is never sent, also once the socket is free', async function () {
    const t = make({ maxSockets: 1, timeoutMs: 200 });
    const blocker = t.request(get('/slow', 5000));
    await until(() => srv.seen.length === 1, 'the slow request at the server');
    await assert.rejects(
      t.request({ api: 'A', method: 'POST', path: '/ok', operation: 'post', idempotent: false, body: { a: 1 } }),
      (e: LhError) => e.kind === 'timeout',
    );
    await blocker; // answered: the socket is free again
    await t.request(get('/ok'));
    assert.deepEqual(
      srv.seen.map((s) => `${s.method} ${s.url}`),
      ['GET /api/v1/slow', 'GET /api/v1/ok'],
    );
    assert.equal(srv.connections(), 1, 'the socket was used again');
  });

  for (const [path, what] of [
    ['/hang', 'never answers'],
    ['/trickle-headers', 'trickles its headers'],
    ['/trickle-body', 'sends its headers, then trickles the body'],
  ] as const) {
    it(`a server that ${what}: the request ends at its deadline as a timeout, once, leaving no timer or socket`, async function () {
      await settled(); // mocha's own timer of the test is set once the test has begun
      const before = resources();
      const t = make({ timeoutMs: 300, retries: 2 });
      assertTimeoutAtDeadline(await failureOf(t, get(path)));
      assert.equal(srv.seen.length, 1, 'the deadline covers the retries: no second attempt after it');
      t.close();
      await settled();
      await until(() => noneLeft(before), 'no timer or socket left');
    });
  }

  it('a TLS handshake that stalls ends at the deadline as a timeout, and nothing is left behind', async function () {
    const silent = await silentServer();
    try {
      await settled(); // mocha's own timer of the test is set once the test has begun
      const before = resources();
      const t = make({ instrumentUrl: `https://127.0.0.1:${silent.port}`, timeoutMs: 300, tls: { rejectUnauthorized: true } });
      assertTimeoutAtDeadline(
        await failureOf(t, { api: 'B', method: 'POST', path: '/x', operation: 'post x', idempotent: false, body: { a: 1 } }),
      );
      t.close();
      await until(() => noneLeft(before), 'the socket closed');
    } finally {
      await silent.stop();
    }
  });

  it('a refused connection fails at once as network, retried only when idempotent', async function () {
    const silent = await silentServer();
    const port = silent.port;
    await silent.stop(); // nothing listens there any more
    const t = make({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5000, retries: 2 });
    const err = await t.request(get('/x')).then(
      () => assert.fail('answered'),
      (e: unknown) => e,
    );
    // "at once": it ended as network, each of its 3 attempts refused; had it waited for the 5 s deadline it would be a
    // timeout (no wall-clock bound, which a busy machine could miss)
    assert.ok(err instanceof LhError);
    assert.equal(err.kind, 'network');
    assert.equal(err.attempts, 3);
  });

  it('a host name that does not resolve ends by the deadline, as network or timeout, and leaves nothing behind', async function () {
    await settled();
    const before = resources();
    const t = make({ baseUrl: 'http://lh-instrument.invalid', timeoutMs: 1000, retries: 2 });
    const started = Date.now();
    const err = await t.request(get('/x')).then(
      () => assert.fail('answered'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof LhError);
    assert.ok(err.kind === 'network' || err.kind === 'timeout', err.message);
    // a safety net for a hang, not a speed test: the deadline is 1 s for all 3 attempts, a hang never ends
    assert.ok(Date.now() - started < 10_000, `ended after ${Date.now() - started} ms`);
    t.close();
    await until(() => noneLeft(before), 'nothing left');
  });

  it('a reset connection: a GET is sent again, a POST only once', async function () {
    const t = make({ timeoutMs: 5000, retries: 2 });
    await assert.rejects(t.request(get('/reset')), (e: LhError) => e.kind === 'network' && e.attempts === 3);
    assert.equal(srv.seen.length, 3);
    srv.seen.length = 0;
    await assert.rejects(
      t.request({ api: 'A', method: 'POST', path: '/reset', operation: 'post', idempotent: false, body: { a: 1 } }),
      (e: LhError) => e.kind === 'network' && e.attempts === 1,
    );
    assert.equal(srv.seen.length, 1, 'the POST was sent once');
  });

  it('a timed-out request destroys its own socket only: the keep-alive socket of an answered request is used again', async function () {
    const t = make({ timeoutMs: 300, maxSockets: 4 });
    await t.request(get('/ok'));
    assert.equal(srv.connections(), 1);
    await Promise.all([t.request(get('/hang')).catch(() => undefined), t.request(get('/ok'))]);
    assert.equal(srv.connections(), 2, 'the held request took a second connection');
    await t.request(get('/ok'));
    await t.request(get('/ok'));
    assert.equal(srv.connections(), 2, 'the answered requests kept using the first one');
  });

  it('a keep-alive socket the server closed while idle is not used again: the next requests are answered', async function () {
    const t = make({ timeoutMs: 2000 });
    await t.request(get('/ok'));
    srv.closeIdle();
    await new Promise((r) => setTimeout(r, 50));
    await t.request(get('/ok'));
    await t.request({ api: 'A', method: 'POST', path: '/ok', operation: 'post', idempotent: false, body: { a: 1 } });
    assert.equal(srv.seen.filter((s) => s.method === 'POST').length, 1);
  });

  it('close(): requests in flight and queued behind maxSockets end at once as closed, nothing is sent after it', async function () {
    const outcomes: AuditOutcome[] = [];
    const audit: AuditHook = {
      intent: () => ({ id: String(outcomes.length), durable: Promise.resolve() }),
      outcome: (_id, _op, outcome) => {
        outcomes.push(outcome);
        return Promise.resolve();
      },
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      await settled(); // mocha's own timer of the test is set once the test has begun
      const before = resources();
      const t = make({ maxSockets: 1, timeoutMs: 10_000, audit });
      const post = (path: string) =>
        t.request({ api: 'A', method: 'POST', path, operation: `post ${path}`, idempotent: false, body: { a: 1 } });
      const held = post('/hang');
      await until(() => srv.seen.length === 1, 'the held request at the server');
      const queued = [post('/ok'), t.request(get('/ok'))];
      await settled(); // both queued behind the held one (maxSockets 1)
      t.close();
      // "at once": each ended because of close() (its message says so), not at its 10 s deadline (a timeout) nor
      // when the held request would have been answered (never); no wall-clock bound, which a busy machine could miss
      const results = await Promise.allSettled([held, ...queued]);
      for (const r of results) {
        assert.equal(r.status, 'rejected', JSON.stringify(results));
        assert.match((r.reason as Error).message, /the connection to the instrument was closed/);
      }
      await t.outcomesWritten();
      assert.equal(outcomes.length, 2, 'both writes have their outcome');
      // the held one reached the instrument (it may have done it); the queued one never left (no socket yet)
      assert.deepEqual(outcomes.map((o) => o.result).sort(), ['not-sent', 'unknown'], JSON.stringify(outcomes));
      await assert.rejects(t.request(get('/ok')), /closed/);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(
        srv.seen.map((s) => s.url),
        ['/api/v1/hang'],
        'only the held request reached the server',
      );
      await settled();
      await until(() => noneLeft(before), 'no timer or socket left');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
  it('close(): an idempotent request with retries left ends at once too, not after a back-off', async function () {
    const t = make({ retries: 2, retryBaseDelayMs: 1000, timeoutMs: 60_000 });
    let ended = false;
    const held = t.request(get('/hang')).then(
      () => assert.fail('answered'),
      (e: unknown) => {
        ended = true;
        return e;
      },
    );
    await until(() => srv.seen.length === 1, 'the held request at the server');
    t.close();
    await settled();
    assert.ok(ended, 'ended at close(), not after a retry wait');
    assert.match(((await held) as Error).message, /the connection to the instrument was closed/);
  });

  describe('the audit outcome of a write the deadline or close() ended', function () {
    /** An audit hook whose intents are durable at once; it keeps the outcomes. */
    function recorded(): { audit: AuditHook; outcomes: AuditOutcome[] } {
      const outcomes: AuditOutcome[] = [];
      const audit: AuditHook = {
        intent: () => ({ id: 'i', durable: Promise.resolve() }),
        outcome: (_id, _op, outcome) => {
          outcomes.push(outcome);
          return Promise.resolve();
        },
      };
      return { audit, outcomes };
    }

    for (const ending of ['its deadline', 'close()'] as const) {
      for (const where of ['queued behind maxSockets', 'at the server'] as const) {
        const expected = where === 'queued behind maxSockets' ? 'not-sent' : 'unknown';
        it(`a write ${where}, ended by ${ending}: recorded ${expected}`, async function () {
          const { audit, outcomes } = recorded();
          const t = make({ maxSockets: 1, timeoutMs: 300, audit });
          // the socket's only slot held by a GET the server never answers (its own deadline far off)
          const blocker =
            where === 'queued behind maxSockets' ? t.request(get('/hang', 10_000)).catch((e: unknown) => e) : undefined;
          if (blocker) await until(() => srv.seen.length === 1, 'the blocker at the server');
          const post = t.request({
            api: 'A',
            method: 'POST',
            path: where === 'at the server' ? '/hang' : '/ok',
            operation: 'start',
            idempotent: false,
            body: { a: 1 },
          });
          const ended = post.then(
            () => assert.fail('answered'),
            (e: unknown) => e,
          );
          if (ending === 'close()') {
            await until(() => srv.seen.length === 1 || where === 'queued behind maxSockets', 'the write at the server');
            await settled();
            t.close();
          }
          assert.ok((await ended) instanceof LhError);
          await t.outcomesWritten();
          t.close();
          await blocker;
          assert.deepEqual(
            outcomes.map((o) => o.result),
            [expected],
          );
          assert.equal(srv.seen.filter((s) => s.method === 'POST').length, where === 'at the server' ? 1 : 0);
        });
      }
    }
  });

  describe('an audited request whose intent is not durable yet', function () {
    let clock: ReturnType<typeof FakeTimers.install> | undefined;
    afterEach(function () {
      clock?.uninstall();
      clock = undefined;
    });

    /** An audit hook whose intents become durable (or fail) when the test says. */
    function heldAudit(): { audit: AuditHook; outcomes: AuditOutcome[]; settle: (err?: Error) => void } {
      const outcomes: AuditOutcome[] = [];
      const waiting: { resolve: () => void; reject: (err: Error) => void }[] = [];
      const audit: AuditHook = {
        intent: () => ({
          id: 'i',
          durable: new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })),
        }),
        outcome: (_id, _op, outcome) => {
          outcomes.push(outcome);
          return Promise.resolve();
        },
      };
      const settle = (err?: Error): void => {
        for (const w of waiting.splice(0))
          if (err) w.reject(err);
          else w.resolve();
      };
      return { audit, outcomes, settle };
    }

    for (const [ending, later] of [
      ['its deadline', 'becomes durable'],
      ['its deadline', 'fails'],
      ['close()', 'becomes durable'],
      ['close()', 'fails'],
    ] as const) {
      it(`ended by ${ending} before it is durable, then the intent ${later}: never sent, recorded as not-sent, nothing unhandled`, async function () {
        const unhandled: unknown[] = [];
        const onUnhandled = (e: unknown): void => {
          unhandled.push(e);
        };
        process.on('unhandledRejection', onUnhandled);
        try {
          const { audit, outcomes, settle } = heldAudit();
          clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
          const t = make({ timeoutMs: 1000, retries: 2, audit });
          const put = t.request({ api: 'A', method: 'PUT', path: '/ok', operation: 'set', idempotent: true, body: { a: 1 } });
          const ended = put.then(
            () => assert.fail('answered'),
            (e: unknown) => e,
          );
          await settled();
          if (ending === 'close()') t.close();
          else clock.tick(1000);
          const err = await ended;
          assert.ok(err instanceof LhError, String(err));
          // the instrument was never asked: the error says so, not "no answer from the instrument"
          assert.match(
            err.message,
            ending === 'close()'
              ? /the connection to the instrument was closed/
              : /was not sent: its audit record was not on disk within 1000 ms/,
          );
          settle(later === 'fails' ? new Error('disk full') : undefined);
          await settled();
          await t.outcomesWritten();
          assert.deepEqual(srv.seen, [], 'nothing reached the server');
          assert.deepEqual(
            outcomes.map((o) => o.result),
            ['not-sent'],
          );
          await settled();
          assert.deepEqual(unhandled, []);
        } finally {
          process.off('unhandledRejection', onUnhandled);
        }
      });
    }
  });
});
