/**
 * Review finding (the first hour): interface A is served over HTTP; a user who writes its base URL with https://
 * pressed Test connection and read that "the TLS certificate of the preparation service (A) … is not trusted
 * (EPROTO …)" and was told to add the instrument's CA certificate in a TLS configuration node, which can never help:
 * the server there answered the TLS hello in plain HTTP (a 400, as IIS, Kestrel, nginx and Node do), OpenSSL's
 * "wrong version number". The same for an instrument URL (B) pointing at a plain HTTP port. The check now says the
 * server speaks plain HTTP and which URL to fix; a server that drops the hello without a word (the simulator) gets
 * a hint that it may not speak HTTPS. The other way round (http:// for a server that speaks only HTTPS: it closes
 * the connection, "socket hang up") Test connection adds a hint to write https://. A real certificate problem keeps
 * its advice.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { closeLocal, listenLocal } from '../support/local-server';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

interface Report {
  ok: boolean;
  checks: { name: string; ok: boolean; message: string }[];
}

describe('review: Test connection with an https:// URL of a service that speaks plain HTTP', function () {
  const sim = useInstrument({ adminServer: true });
  /** a plain HTTP server as most are: a TLS hello is answered with an HTTP 400 */
  let plain: http.Server | undefined;
  let plainUrl = '';
  before(async function () {
    plain = http.createServer((_req, res) => res.end('{}'));
    plainUrl = await listenLocal(plain);
  });
  beforeEach(async function () {
    const server = serverFlow(sim); // a Node-RED running, as the editor's is
    await loadFlow(server.nodes, server.credentials);
  });
  after(async function () {
    if (plain) await closeLocal(plain);
  });

  async function testConnection(body: Record<string, unknown>): Promise<Report> {
    const res = await helper
      .request()
      .post('/lh-server/test-connection')
      .send({ ...USER, timeout: 3000, ...body });
    assert.equal(res.status, 200);
    return res.body as Report;
  }
  const check = (report: Report, name: string): string => report.checks.find((c) => c.name === name)?.message ?? '';

  it('A: says the server speaks plain HTTP and to write http://, not to add a CA certificate', async function () {
    const report = await testConnection({ baseUrl: plainUrl.replace(/^http:/, 'https:') });
    assert.equal(report.ok, false);
    const a = check(report, 'A');
    assert.match(a, /speaks plain HTTP: write the base URL with http:\/\//);
    assert.doesNotMatch(a, /not trusted|CA certificate/);
  });

  it('B: says the server there speaks plain HTTP, not HTTPS, and to check the instrument URL', async function () {
    const instrumentUrl = plainUrl.replace(/^http:/, 'https:');
    const report = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl, simulatorCa: true });
    assert.equal(report.ok, false);
    const b = check(report, 'B');
    assert.match(b, /speaks plain HTTP, not the HTTPS interface B is served over: check the host and port of the instrument URL/);
    assert.doesNotMatch(b, /not trusted|CA certificate/);
  });

  it('A on the simulator (it drops a TLS hello unanswered): a hint that the server may speak plain HTTP', async function () {
    const report = await testConnection({ baseUrl: sim.baseUrl.replace(/^http:/, 'https:') });
    assert.match(check(report, 'A'), /cannot reach .* the server there may speak plain HTTP .*an http:\/\/ base URL\?/);
  });

  it('the other way round, http:// for a server that speaks only HTTPS (it drops plain HTTP): a hint to write https://', async function () {
    const httpOfB = sim.instrumentUrl.replace(/^https:/, 'http:');
    const a = await testConnection({ baseUrl: httpOfB });
    assert.match(check(a, 'A'), /cannot reach .*\. If the server there speaks HTTPS, write the URL with https:\/\//);
    const b = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: httpOfB, allowInsecureInstrument: true });
    assert.match(check(b, 'B'), /cannot reach .*\. If the server there speaks HTTPS, write the URL with https:\/\//);
    const refused = await testConnection({ baseUrl: plainUrl.replace(/:\d+$/, ':9') });
    assert.doesNotMatch(check(refused, 'A'), /HTTPS/, 'a connection refused gets no such hint');
  });

  it('a certificate the lh-server does not trust still says to add the CA certificate', async function () {
    const report = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl });
    assert.match(check(report, 'B'), /not trusted.*TLS configuration node/s);
  });
});
