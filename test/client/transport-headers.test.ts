/**
 * A header value Node's http refuses (a line break, a control character, a character outside Latin-1: a token pasted
 * with one) stops the request before anything is sent, as a configuration problem: not retried, not "cannot reach",
 * so the instrument is not taken for offline; the token never shows in the error.
 */
import assert from 'node:assert/strict';
import http from 'http';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import { AuditHook, AuditOutcome, Transport } from '../../src/client/transport';
import { closeLocal, listenLocal } from '../support/local-server';

describe('transport: header values Node refuses', function () {
  let server: http.Server;
  let url = '';
  let seen = 0;
  const open: Transport[] = [];

  before(async function () {
    server = http.createServer((req, res) => {
      seen++;
      req.resume();
      res.end('{}');
    });
    url = await listenLocal(server);
  });
  afterEach(function () {
    for (const t of open.splice(0)) t.close();
  });
  after(async function () {
    await closeLocal(server);
  });

  /** A token with at least one character an HTTP header cannot carry. */
  const badToken = fc
    .tuple(
      fc.string({ maxLength: 20 }),
      fc.oneof(
        fc.constantFrom('\r', '\n', '\r\nX-Injected: 1', '\u0000', '\u007f', '\u20ac', '\u2019', '\ud800'),
        fc.integer({ min: 0x100, max: 0xffff }).map((c) => String.fromCharCode(c)),
      ),
      fc.string({ maxLength: 20 }),
    )
    .map(([a, bad, b]) => `tok-${a}${bad}${b}`);

  it('a GET with such a token fails once as a config error naming the header, never the token, and sends nothing', async function () {
    const t = new Transport({ baseUrl: url, retries: 2, retryBaseDelayMs: 1, timeoutMs: 5000 });
    open.push(t);
    await fc.assert(
      fc.asyncProperty(badToken, async (token) => {
        const before = seen;
        const err = await t.request({ api: 'A', method: 'GET', path: '/x', operation: 'get-x', idempotent: true, token }).then(
          () => assert.fail('sent'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof LhError, String(err));
        assert.equal(err.kind, 'config', err.message);
        assert.equal(err.attempts, 1, 'not retried');
        assert.match(err.message, /Authorization/);
        assert.ok(!err.message.includes(token), err.message);
        assert.equal(seen, before, 'nothing reached the server');
      }),
      { numRuns: 50 },
    );
  });

  it('an audited POST with such a token is recorded not-sent', async function () {
    const outcomes: AuditOutcome[] = [];
    const audit: AuditHook = {
      intent: () => ({ id: 'i', durable: Promise.resolve() }),
      outcome: (_id, _op, outcome) => {
        outcomes.push(outcome);
        return Promise.resolve();
      },
    };
    const t = new Transport({ baseUrl: url, retries: 2, timeoutMs: 5000, audit });
    open.push(t);
    await assert.rejects(
      t.request({ api: 'A', method: 'POST', path: '/x', operation: 'create-x', idempotent: false, body: {}, token: 'a\nb' }),
      (err: LhError) => err.kind === 'config',
    );
    await t.outcomesWritten();
    assert.deepEqual(
      outcomes.map((o) => o.result),
      ['not-sent'],
    );
  });
});
