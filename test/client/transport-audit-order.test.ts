/**
 * An audited request's outcome record is appended after the caller has the answer (0.3.3): the flow goes on (its
 * next request sent) while the outcome is sealed and written, and close() still waits for it. Whatever the answer
 * (applied, refused, unknown), the record says it, once.
 */
import assert from 'node:assert/strict';
import fs from 'fs';
import http from 'http';

import fc from 'fast-check';

import { type AuditAppender, AuditChains, type AuditRecord, AuditTrail, chainName, sha256Hex } from '../../src/audit';
import { Transport } from '../../src/client/transport';
import { KEY, readChain, tempDir, verify } from '../audit/chain-support';
import { closeLocal, listenLocal } from '../support/local-server';

describe('transport: the outcome record comes after the caller has the answer', function () {
  const statuses = [200, 204, 400, 409, 500, 503];
  let server: http.Server | undefined;
  let url = '';

  before(async function () {
    const s = http.createServer((req, res) => {
      const status = Number(/\/status\/(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
      req.resume();
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(status === 204 ? undefined : '{}');
    });
    [server, url] = [s, await listenLocal(s)];
  });
  after(async function () {
    if (server) await closeLocal(server);
  });

  it('property: the caller’s next step comes before the outcome; close() waits for it; one outcome per request, with the answer’s result', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...statuses), { minLength: 1, maxLength: 6 }), async (answers) => {
        const events: string[] = [];
        // the chain as the trail writes it (the order is the trail's now, issue 30.1: the transport has none)
        const pathOf = new Map<string, string>();
        const log: AuditAppender = {
          append: (fields) => {
            if (fields.phase === 'intent') {
              pathOf.set(fields.id, fields.what.path);
              events.push(`intent ${fields.what.path}`);
            } else if (fields.phase === 'outcome') events.push(`outcome ${pathOf.get(fields.id)} ${fields.outcome.result}`);
            return Promise.resolve({} as AuditRecord);
          },
          close: () => Promise.resolve(),
          on: () => undefined,
        };
        const t = new Transport({ baseUrl: url, retries: 0, timeoutMs: 5000, audit: new AuditTrail(log, { instrument: 'i' }) });
        const expected: string[] = [];
        for (const [i, status] of answers.entries()) {
          const path = `/status/${status}/${i}`;
          await t
            .request({ api: 'A', method: 'PUT', path, operation: 'put-x', idempotent: false, body: { i } })
            .catch(() => undefined);
          events.push(`caller ${path}`);
          const result = status < 300 ? 'applied' : status < 500 ? 'refused' : 'unknown';
          expected.push(`intent ${path}`, `caller ${path}`, `outcome ${path} ${result}`);
        }
        t.close();
        await t.outcomesWritten();
        // the last outcome comes after the caller's step too, and close() waited for it
        assert.deepEqual(events, expected);
      }),
      { numRuns: 25 },
    );
  });

  it('two lh-server nodes of one instrument (one chain): an answer’s outcome is in the chain before the intent of the action that followed it through the other node', async function () {
    // the instrument's home gives every lh-server node of it its own client and trail, on one chain (log and order)
    const dir = tempDir();
    const chains = new AuditChains();
    const uses = ['server-a', 'server-b'].map((node) =>
      chains.useFile({ key: KEY.toString('utf8'), dir }, undefined, 'i', { node }),
    );
    const [a, b] = uses.map(
      (use) =>
        new Transport({
          baseUrl: url,
          retries: 0,
          timeoutMs: 5000,
          audit: use?.trail,
        }),
    );
    try {
      // a flow: an action through node a, then, on its answer, one through node b (and back)
      const steps: [Transport, string][] = [
        [a, '/status/200/1'],
        [b, '/status/409/2'],
        [a, '/status/200/3'],
      ];
      for (const [t, path] of steps) {
        await t
          .request({ api: 'A', method: 'PUT', path, operation: 'put-x', idempotent: false, body: {} })
          .catch(() => undefined);
      }
      for (const t of [a, b]) t.close();
      await Promise.all([a.outcomesWritten(), b.outcomesWritten()]);
      await Promise.all(uses.map((use) => use?.release())); // the last one closes the chain
      const chain = readChain(dir, chainName('i', sha256Hex('i')));
      const report = verify(chain);
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
      const records = chain.files
        .flatMap((f) => f.text.split('\n'))
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { phase: string; what?: { path: string }; id?: string });
      const pathOf = new Map(records.filter((r) => r.phase === 'intent').map((r) => [r.id, r.what?.path]));
      const order = records.filter((r) => r.phase !== 'file').map((r) => `${r.phase} ${pathOf.get(r.id) ?? '?'}`);
      assert.deepEqual(
        order,
        steps.flatMap(([, path]) => [`intent ${path}`, `outcome ${path}`]),
      );
    } finally {
      for (const t of [a, b]) t.close();
      await Promise.all(uses.map((use) => use?.release())).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
