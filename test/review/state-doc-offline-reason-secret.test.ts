/**
 * Review finding (review34, secrets): an instrument that answers with a 5xx whose problem detail echoes the request
 * (the password of a login among it) makes the lh-server offline with that detail as its reason. The reason goes into
 * the state document's `connection.reason` (MQTT, retained) and the fleet tab. It went there as the instrument wrote
 * it, password and all (the error watch's own connection msg was redacted, the lab's copy was not): the reason is now
 * redacted where the lab hears it.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { restartMemory } from '../support/homes';
import { closeLocal, listenLocal } from '../support/local-server';
import { helper, packageNodes, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const PASSWORD = 'secret1';

describe('review: the state document of an instrument whose 5xx echoes the password', function () {
  this.timeout(30000);
  let server: http.Server;
  let url: string;
  before(async function () {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ title: 'Internal error', detail: `could not handle ${req.url} ${body}` }));
      });
    });
    url = await listenLocal(server);
  });
  after(async () => closeLocal(server));
  afterEach(async () => {
    await helper.unload();
    restartMemory();
  });

  it('says offline without the password in the reason', async function () {
    const docs: Msg[] = [];
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [
        { id: 'server', type: 'lh-server', name: 'echo', baseUrl: url, instrumentUrl: '', clientKey: 'nodered1', timeout: 2000 },
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.2,
          offlineAfter: 1,
          wires: [[], [], ['conn']],
        },
        { id: 'state', type: 'lh-state', server: 'server', rate: '20', machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      { server: { username: 'admin', password: PASSWORD } },
    );
    helper.getNode('doc').on('input', (m: Msg) => docs.push(m));
    await until(
      () => docs.some((m) => (m.payload as Msg & { connection: { state: string } }).connection.state === 'offline'),
      'offline',
      20000,
    );
    const text = JSON.stringify(docs);
    assert.ok(!text.includes(PASSWORD), `no password in a state document: ${text}`);
    const offline = docs.find((m) => (m.payload as { connection: { state: string } }).connection.state === 'offline');
    assert.match(String((offline?.payload as { connection: { reason: string } }).connection.reason), /500 Internal error/);
  });
});
