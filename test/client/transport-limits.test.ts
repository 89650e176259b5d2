/**
 * What the transport refuses, through its own request transport (bca97d9) as through axios's before: an answer over
 * the cap (plain, or compressed small and inflated past it), a redirect (never followed, for any method, to any host).
 */
import assert from 'node:assert/strict';
import http from 'http';
import zlib from 'zlib';

import { LhError } from '../../src/client';
import { MAX_RESPONSE_BYTES, Transport } from '../../src/client/transport';
import { closeLocal, listenLocal } from '../support/local-server';
import { until } from '../support/until';

const BIG = MAX_RESPONSE_BYTES + 8 * 1024 * 1024;

describe('transport: answer caps and redirects', function () {
  let server: http.Server;
  let other: http.Server;
  let url = '';
  let otherUrl = '';
  const seenByOther: string[] = [];
  /** Sockets of /garbled answers the client has let go of. */
  let garbledClosed = 0;
  const bomb = new Map<string, Buffer>();
  const open: Transport[] = [];

  before(async function () {
    const inflated = Buffer.concat([Buffer.from('"'), Buffer.alloc(BIG, 0x20), Buffer.from('"')]);
    bomb.set('gzip', zlib.gzipSync(inflated));
    bomb.set('deflate', zlib.deflateSync(inflated));
    bomb.set('br', zlib.brotliCompressSync(inflated, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }));
    other = http.createServer((req, res) => {
      seenByOther.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end('{}');
    });
    otherUrl = await listenLocal(other);
    server = http.createServer((req, res) => {
      req.resume();
      const [, , , name, arg] = (req.url ?? '').split(/[/?]/);
      if (name === 'big') {
        res.setHeader('Content-Type', 'application/json');
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        res.write('"');
        let sent = 0;
        const more = (): void => {
          while (sent < BIG && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          if (!res.destroyed) res.end('"');
        };
        more();
      } else if (name === 'bomb') {
        const body = bomb.get(arg) ?? Buffer.alloc(0);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': arg, 'Content-Length': body.length });
        res.end(body);
      } else if (name === 'garbled') {
        // headers saying the body is compressed, bytes that are not, and the answer held open (a keep-alive socket)
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': arg });
        res.write('this is not compressed at all');
        res.on('close', () => garbledClosed++);
      } else if (name === 'redirect') {
        res.writeHead(Number(arg), { Location: `${otherUrl}/api/v1/steal` });
        res.end();
      } else res.end('{}');
    });
    url = await listenLocal(server);
  });
  afterEach(function () {
    for (const t of open.splice(0)) t.close();
  });
  after(async function () {
    await closeLocal(server);
    await closeLocal(other);
  });
  const make = (): Transport => {
    const t = new Transport({ baseUrl: url, retries: 0, timeoutMs: 20_000 });
    open.push(t);
    return t;
  };
  const tooLarge = (err: LhError): boolean =>
    err.kind === 'response' && new RegExp(`larger than ${MAX_RESPONSE_BYTES} bytes`).test(err.message);

  it(`an answer over the default cap (${BIG} bytes) is refused, as JSON and as a file`, async function () {
    const t = make();
    await assert.rejects(t.request({ api: 'A', method: 'GET', path: '/big', operation: 'big', idempotent: true }), tooLarge);
    await assert.rejects(
      t.request({ api: 'A', method: 'GET', path: '/big', operation: 'big', idempotent: true, responseType: 'buffer' }),
      tooLarge,
    );
    // the refused answer's socket was its own: the transport goes on
    await t.request({ api: 'A', method: 'GET', path: '/ok', operation: 'ok', idempotent: true });
  });

  for (const encoding of ['gzip', 'deflate', 'br']) {
    it(`a ${encoding} answer that inflates past the cap is refused (a compression bomb)`, async function () {
      const t = make();
      assert.ok((bomb.get(encoding)?.length ?? 0) < 1024 * 1024, 'small on the wire');
      await assert.rejects(
        t.request({ api: 'A', method: 'GET', path: `/bomb/${encoding}`, operation: 'bomb', idempotent: true }),
        tooLarge,
      );
    });
  }

  for (const encoding of ['gzip', 'deflate', 'br']) {
    it(`a ${encoding} answer that cannot be decoded lets its socket go: the next request on the only socket is answered`, async function () {
      const t = new Transport({ baseUrl: url, retries: 0, timeoutMs: 20_000, maxSockets: 1 });
      open.push(t);
      const closedBefore = garbledClosed;
      await assert.rejects(
        t.request({ api: 'A', method: 'GET', path: `/garbled/${encoding}`, operation: 'garbled', idempotent: true }),
        LhError,
      );
      await until(() => garbledClosed > closedBefore, 'the garbled answer its socket closed by the client');
      const res = await t.request({ api: 'A', method: 'GET', path: '/ok', operation: 'ok', idempotent: true });
      assert.equal(res.status, 200);
    });
  }

  for (const status of [301, 302, 303, 307, 308]) {
    it(`a ${status} to another host is not followed, for a GET and a POST, and no credential leaves`, async function () {
      const t = make();
      for (const method of ['GET', 'POST'] as const) {
        await assert.rejects(
          t.request({
            api: 'A',
            method,
            path: `/redirect/${status}`,
            operation: 'moved',
            idempotent: method === 'GET',
            token: 'secret-token-value',
            ...(method === 'POST' ? { body: { a: 1 } } : {}),
          }),
          (err: LhError) => err.statusCode === status && /redirects to .*not followed/.test(err.message),
        );
      }
      assert.deepEqual(seenByOther, []);
    });
  }
});
