/**
 * TLS options are passed whole: a client certificate given as a PKCS#12 file (.p12) in a core tls-config node,
 * and its ALPN protocol, reach interface B of an instrument that requires a client certificate (mutual TLS).
 * The certificates are made at test time with the openssl command line.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import fs from 'fs';
import https from 'https';
import os from 'os';
import path from 'path';

import type { AddressInfo } from 'net';
import type { TLSSocket } from 'tls';
import { WebSocketServer } from 'ws';

import { InstrumentEvents } from '../../src/client';
import { tlsOptionsOf } from '../../src/nodes/shared/tls-config';
import { certPath, Simulator } from '../../src/simulator';
import { helper, loadFlow, nextMessage, SIMULATOR_CA_FILE, USER } from '../support/runtime';

type Msg = Record<string, unknown>;
const P12_PASSWORD = 'p12-test-passphrase';

/** A throwaway client CA and a client certificate signed by it, bundled with its key as client.p12. */
function makeClientCertificate(dir: string): { ca: string; p12: string } {
  const run = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=lh-test-client-ca',
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=node-red-bench-1');
  run(
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.pem',
    '-days',
    '2',
  );
  run('pkcs12', '-export', '-in', 'client.pem', '-inkey', 'client.key', '-out', 'client.p12', '-passout', `pass:${P12_PASSWORD}`);
  return { ca: fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8'), p12: path.join(dir, 'client.p12') };
}

describe('TLS options passed whole', function () {
  this.timeout(30000);
  let dir = '';
  let p12 = '';
  let sim: Simulator;

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-tls-'));
    const made = makeClientCertificate(dir);
    p12 = made.p12;
    sim = new Simulator({ clientCa: made.ca });
    await sim.start();
  });
  after(async function () {
    await sim.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async function () {
    await helper.unload();
    sim.reset();
  });

  async function checkHandler(tls: Msg, tlsCredentials: Record<string, string> = {}): Promise<{ out?: Msg; caught?: Msg }> {
    await loadFlow(
      [
        {
          id: 'server',
          type: 'lh-server',
          name: 'mtls',
          baseUrl: sim.baseUrl,
          instrumentUrl: sim.instrumentUrl,
          clientKey: 'nodered1',
          tls: 'tls',
          timeout: 5000,
        },
        {
          id: 'tls',
          type: 'tls-config',
          name: 'client cert',
          cert: '',
          key: '',
          ca: SIMULATOR_CA_FILE,
          verifyservercert: true,
          ...tls,
        },
        { id: 'handler', type: 'lh-register-handler', server: 'server', operation: 'check', wires: [['out']] },
        { id: 'catcher', type: 'catch', scope: ['handler'], wires: [['caught']] },
        { id: 'out', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      { server: { ...USER }, tls: tlsCredentials },
    );
    const out = nextMessage(helper.getNode('out')).then((m) => ({ out: m }));
    const caught = nextMessage(helper.getNode('caught')).then((m) => ({ caught: m }));
    helper.getNode('handler').receive({});
    return Promise.race([out, caught]);
  }

  it('a .p12 client certificate and the ALPN protocol of a tls-config node reach interface B', async function () {
    const result = await checkHandler({ cert: p12, key: p12, alpnprotocol: 'http/1.1' }, { passphrase: P12_PASSWORD });
    assert.ok(result.out, `expected an answer, got ${JSON.stringify(result.caught?._error)}`);
    assert.equal(result.out.payload, false);
    const b = sim.requests.filter((r) => r.api === 'B');
    assert.equal(b.length, 1);
    assert.equal(b[0].clientCertificate, 'node-red-bench-1');
    assert.equal(b[0].alpnProtocol, 'http/1.1');
  });

  it('without the client certificate the instrument refuses the connection (the test can fail)', async function () {
    const result = await checkHandler({});
    assert.ok(result.caught, 'refused');
    assert.equal(sim.requests.filter((r) => r.api === 'B').length, 0);
  });

  it('passes on every option a tls-config node sets, also ones this package does not know', function () {
    const pfx = fs.readFileSync(p12);
    const options = tlsOptionsOf({
      pfx,
      passphrase: 'x',
      ALPNProtocols: ['h2'],
      ciphers: 'HIGH',
      minVersion: 'TLSv1.3',
      rejectUnauthorized: true,
    });
    assert.deepEqual(options, {
      pfx,
      passphrase: 'x',
      ALPNProtocols: ['h2'],
      ciphers: 'HIGH',
      minVersion: 'TLSv1.3',
      rejectUnauthorized: true,
    });
  });
  it('the event websocket (wss://) presents the same .p12 client certificate as HTTP', async function () {
    const server = https.createServer({
      key: fs.readFileSync(certPath('server-key.pem')),
      cert: fs.readFileSync(certPath('server.pem')),
      ca: fs.readFileSync(path.join(dir, 'ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
    });
    const wss = new WebSocketServer({ server });
    const presented = new Promise<string>((resolve) =>
      wss.on('connection', (_ws, req) => resolve(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN))),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const events = new InstrumentEvents({
      baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      tls: {
        pfx: fs.readFileSync(p12),
        passphrase: P12_PASSWORD,
        ca: fs.readFileSync(SIMULATOR_CA_FILE),
        ALPNProtocols: ['http/1.1'],
      },
      pingIntervalMs: 0,
    });
    try {
      events.subscribe('events', () => undefined);
      assert.equal(await presented, 'node-red-bench-1');
    } finally {
      await events.close();
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
