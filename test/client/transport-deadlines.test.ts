/**
 * Every request ends by its own deadline or at close(), whatever the server does: a request queued behind maxSockets,
 * a server that never answers, trickles its headers or its body, a TLS handshake that stalls, a refused connection.
 */
import assert from 'node:assert/strict';
import http from 'http';
import net from 'net';
import { AddressInfo } from 'net';
import { LhError } from '../../src/client';
import { AuditHook, AuditOutcome, Transport } from '../../src/client/transport';

interface Seen {
  method: string;
  url: string;
}

/** A server whose answer depends on the path: /hang never answers, /ok answers {} at once. */
async function rawServer(): Promise<{ url: string; seen: Seen[]; connections: () => number; stop: () => Promise<void> }> {
  const seen: Seen[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    if (req.url?.includes('/hang')) return;
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
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const get = (path: string, minTimeoutMs?: number) =>
  ({ api: 'A', method: 'GET', path, operation: `get ${path}`, idempotent: true, minTimeoutMs }) as const;

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
    const started = Date.now();
    const blocker = t.request(get('/hang', 10_000)).catch((e: unknown) => e);
    const queued = await t.request(get('/ok')).then(
      () => assert.fail('answered'),
      (e: unknown) => e,
    );
    const took = Date.now() - started;
    assert.ok(queued instanceof LhError);
    assert.equal(queued.kind, 'timeout');
    assert.ok(took < 2000, `the queued request ended after ${took} ms (its deadline is 300 ms, the blocker's 10 s)`);
    t.close();
    const ended = await blocker;
    assert.ok(ended instanceof LhError && /closed/.test(ended.message));
    assert.equal(srv.seen.filter((s) => s.url.endsWith('/ok')).length, 0, 'the queued request was never sent');
  });
});
