/**
 * README "Security": no secret in msg, status or logs, "also when an instrument echoes them". An instrument (or a
 * proxy in front of it) that answers an error with a dump of headers or settings in the colon form (`X-Api-Key:
 * …`, `Set-Cookie: sid=…`, `password: …`, Python's `{'token': '…'}`) put secrets the package was never told about
 * into msg.error, the Error Catch nodes get, the status line and the log: only objects, JSON fields and
 * `name=value` were recognised. Real Node-RED, an instrument over HTTP answering 400 in text and in JSON.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { inspect } from 'util';

import { closeLocal, listenLocal } from '../support/local-server';
import { builtNode } from '../support/node-suite';
import { helper, nextMessage, startServer, stopServer, tlsConfigNode, USER } from '../support/runtime';

/** Secrets of the lab the package never saw (a proxy's API key, a session cookie, another account's password). */
const UNKNOWN = ['PXKEY-7Q9Z', 'SIDQ-4411-ZZ', 'Other PW ÄQ', 'TOKQ-PY-88'];

const DUMP = [
  'upstream refused the request',
  'X-Api-Key: PXKEY-7Q9Z',
  'Set-Cookie: sid=SIDQ-4411-ZZ; Path=/; HttpOnly',
  'service_password: Other PW ÄQ',
  "config: {'host': 'lims', 'token': 'TOKQ-PY-88'}",
].join('\r\n');

async function startInstrument(json: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (json) {
        res.writeHead(400, { 'Content-Type': 'application/problem+json' });
        res.end(JSON.stringify({ title: 'Bad Request', detail: DUMP }));
      } else {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end(DUMP.slice(0, 199));
      }
    });
  });
  return { url: await listenLocal(server), close: () => closeLocal(server) };
}

describe('review: secrets an instrument echoes in the colon form reach no msg, status or log', function () {
  let instrument: Awaited<ReturnType<typeof startInstrument>> | undefined;
  const texts: string[] = [];

  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    await instrument?.close();
    instrument = undefined;
    texts.length = 0;
  });

  for (const json of [false, true]) {
    it(`an error body in ${json ? 'JSON' : 'plain text'} with a header dump: none of the lab's secrets goes out`, async function () {
      instrument = await startInstrument(json);
      await helper.load(
        [tlsConfigNode, builtNode('lh-server'), builtNode('lh-settings')],
        [
          { id: 'server', type: 'lh-server', baseUrl: instrument.url, instrumentUrl: '', clientKey: 'k1', timeout: 3000 },
          { id: 'settings', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
          { id: 'out', type: 'helper' },
          { id: 'catcher', type: 'catch', scope: ['settings'], wires: [['caught']] },
          { id: 'caught', type: 'helper' },
        ],
        { server: { ...USER } },
      );
      for (const id of ['server', 'settings']) {
        for (const method of ['status', 'log', 'warn', 'error'])
          helper
            .getNode(id)
            .on(`call:${method}`, (call: { args: unknown[] }) =>
              texts.push(`${id} ${method}: ${inspect(call.args, { depth: 8 })}`),
            );
      }
      const caught = nextMessage(helper.getNode('caught'));
      helper.getNode('settings').receive({ payload: null });
      const msg = await caught;
      const all = [inspect(msg, { depth: 10 }), ...texts].join('\n');
      // the echo did reach the node, its ordinary words kept
      assert.match(String((msg._error as { message: string }).message), /upstream refused the request/);
      assert.match(all, /X-Api-Key: \*\*\*/);
      for (const secret of UNKNOWN) assert.ok(!all.includes(secret), `${secret} went out:\n${all}`);
    });
  }
});
