/**
 * Interface B of a real instrument is served with a self-signed certificate made out to the instrument's host name,
 * and is commonly reached by its IP address (README, "Connecting a real instrument", step 3). A user who followed
 * step 3 (the certificate added in a TLS configuration node) then fails on the name, not on trust: the message must
 * say so and name the way out (the Server name of the TLS configuration node), not ask again for the CA the user
 * already gave. The certificates are made at test time with the openssl command line.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import fs from 'fs';
import https from 'https';
import os from 'os';
import path from 'path';

import type { AddressInfo } from 'net';

import { LhError, Transport } from '../../src/client';
import { tlsOptionsOf } from '../../src/nodes/shared/tls-config';

const NAME = 'nimbus-b.lab';

/** A self-signed certificate (its own CA) for NAME only, as an instrument makes one for itself. */
function selfSigned(dir: string): { cert: string; key: string } {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2'] //
      .concat(['-subj', `/CN=${NAME}`, '-addext', `subjectAltName=DNS:${NAME}`]),
    { cwd: dir, stdio: 'pipe' },
  );
  return { cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8') };
}

describe('review: a self-signed certificate of interface B reached by the IP address', function () {
  this.timeout(30000);
  let dir = '';
  let cert = '';
  let server: https.Server;
  let url = '';
  const open: Transport[] = [];
  const seen: string[] = [];

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-selfsigned-'));
    const made = selfSigned(dir);
    cert = made.cert;
    server = https.createServer({ cert: made.cert, key: made.key }, (req, res) => {
      seen.push(req.url ?? '');
      res.setHeader('Content-Type', 'application/json; x-api-version=3.0');
      res.end('{"success":true,"data":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(function () {
    for (const t of open.splice(0)) t.close();
    seen.length = 0;
  });

  /** A B read through a transport with the options a tls-config node gives (tlsOptionsOf, as lh-server passes them). */
  async function readB(tlsNode: Record<string, unknown> | undefined): Promise<unknown> {
    const t = new Transport({
      baseUrl: 'http://127.0.0.1:1',
      instrumentUrl: url,
      tls: tlsNode && tlsOptionsOf(tlsNode),
      retries: 0,
      timeoutMs: 5000,
    });
    open.push(t);
    const res = await t.request({
      api: 'B',
      method: 'GET',
      path: '/instrument-errors/unhandled',
      operation: 'unhandled',
      idempotent: true,
    });
    return res.data;
  }

  async function refusal(tlsNode: Record<string, unknown> | undefined): Promise<LhError> {
    return readB(tlsNode).then(
      () => assert.fail('answered'),
      (err: unknown) => {
        assert.ok(err instanceof LhError);
        return err;
      },
    );
  }

  it('without the certificate: refused as untrusted, and told to add the certificate itself', async function () {
    const err = await refusal(undefined);
    assert.equal(err.kind, 'tls');
    assert.match(err.message, /not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT/);
    assert.match(err.message, /for a self-signed certificate, the certificate itself/);
    assert.deepEqual(seen, [], 'nothing reached the instrument');
  });

  it('with the certificate added but the IP address in the URL: told the names it is made out to and the Server name fix', async function () {
    const err = await refusal({ ca: cert });
    assert.equal(err.kind, 'tls');
    assert.equal(err.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.match(err.message, new RegExp(`trusted but made out to "${NAME.replace(/\./g, '\\.')}", not to 127\\.0\\.0\\.1`));
    assert.match(err.message, /as Server name in the TLS configuration node/);
    assert.doesNotMatch(
      err.message,
      /Add the instrument's CA certificate/,
      'the CA is already trusted: asking for it again misleads',
    );
    assert.deepEqual(seen, [], 'nothing reached the instrument');
  });

  it("with the certificate's name as Server name (the fix the message names): answered", async function () {
    assert.deepEqual(await readB({ ca: cert, servername: NAME }), { success: true, data: [] });
    assert.deepEqual(seen, ['/api/vector/v3/instrument-errors/unhandled']);
  });
});
