import assert from 'node:assert/strict';
import http from 'http';
import { AddressInfo } from 'net';

import { ClientOptions, LhError, LiquidHandlerClient } from '../../src/client';
import { useClients } from '../support/client-suite';

describe('transport', function () {
  const suite = useClients({}, { retryBaseDelayMs: 5, timeoutMs: 2000 });
  const sim = suite.sim;
  const make = (overrides: Partial<ClientOptions> = {}): LiquidHandlerClient => suite.make(overrides);

  it('uses the media types of the spec: json-patch for POST, json for PUT', async function () {
    const c = make();
    const step = await c.prep.createStep(2, { stepType: 'PauseStep', name: 'Wait', duration: 30 });
    await c.prep.renameStep(2, step.id, 'Wait longer');
    const post = sim.requests.find((r) => r.method === 'POST' && r.path === '/api/v1/protocols/2/step');
    const put = sim.requests.find((r) => r.method === 'PUT' && r.path === `/api/v1/protocols/2/step/rename/${step.id}`);
    assert.equal(post?.contentType, 'application/json-patch+json');
    assert.deepEqual(post?.body, { stepType: 'PauseStep', name: 'Wait', duration: 30 });
    assert.equal(put?.contentType, 'application/json');
    assert.deepEqual(put?.body, { newName: 'Wait longer' });
  });

  it('retries an idempotent request after 5xx answers, with back-off', async function () {
    const c = make();
    await c.prep.getSoftwareSettings();
    sim.clearRequests();
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    await assert.rejects(c.prep.getSoftwareSettings(), (err: LhError) => err.statusCode === 503 && err.attempts === 3);
    assert.equal(sim.requests.length, 3);
  });

  it('never sends a non-idempotent request twice', async function () {
    const c = make();
    await c.prep.getSoftwareSettings();
    sim.clearRequests();
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    await assert.rejects(c.prep.createStep(2, { stepType: 'PauseStep', name: 'x' }), /503/);
    assert.equal(sim.requests.filter((r) => r.method === 'POST').length, 1);
  });

  it('a reset or a held answer at the simulator: a GET is sent again within its deadline, a POST once', async function () {
    const c = make({ timeoutMs: 400 });
    await c.prep.getSoftwareSettings(); // logged in
    sim.clearRequests();
    sim.setFaults({ resetRate: 1 });
    await assert.rejects(c.prep.getSoftwareSettings(), (err: LhError) => err.kind === 'network' && err.attempts === 3);
    assert.equal(sim.requests.length, 3);
    sim.clearRequests();
    await assert.rejects(c.prep.createStep(2, { stepType: 'PauseStep', name: 'x' }), (err: LhError) => err.kind === 'network');
    sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 5000 });
    const started = Date.now();
    await assert.rejects(c.prep.createStep(2, { stepType: 'PauseStep', name: 'y' }), (err: LhError) => err.kind === 'timeout');
    // the claim's own bound: ended by its deadline (400 ms), before the simulator lets go of it (5 s); a busy machine
    // adds milliseconds, not seconds
    assert.ok(Date.now() - started < 5000, `the held POST ended after ${Date.now() - started} ms (deadline 400 ms)`);
    assert.deepEqual(
      sim.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { name: string }).name),
      ['x', 'y'],
      'each POST reached the simulator once',
    );
  });

  it('reuses keep-alive connections', async function () {
    const c = make();
    await c.prep.getSoftwareSettings();
    for (let i = 0; i < 20; i++) await c.prep.getSoftwareSettings();
    const sockets = new Set(sim.requests.map((r) => r.remotePort));
    assert.equal(sockets.size, 1);
  });

  it('reuses keep-alive connections to interface B (HTTPS) through its own request function', async function () {
    const c = make();
    await c.instrument.isErrorHandlerRegistered();
    for (let i = 0; i < 10; i++) await c.instrument.isErrorHandlerRegistered();
    const sockets = new Set(sim.requests.filter((r) => r.api === 'B').map((r) => r.remotePort));
    assert.equal(sockets.size, 1);
  });

  it('a URL whose scheme is spelled in capitals (HTTP://, HTTPS://, accepted by the URL check) is served, A and B', async function () {
    const upper = (u: string): string => u.replace(/^https?:/, (scheme) => scheme.toUpperCase());
    const c = make({ baseUrl: upper(sim.baseUrl), instrumentUrl: upper(sim.instrumentUrl) });
    assert.ok(await c.prep.getSoftwareSettings());
    assert.equal(typeof (await c.instrument.isErrorHandlerRegistered()), 'boolean');
  });

  it('rejects an untrusted certificate with a message that names the fix, and trusts the CA given', async function () {
    const untrusted = make({ tls: undefined });
    await assert.rejects(untrusted.instrument.isErrorHandlerRegistered(), (err: LhError) => {
      assert.equal(err.kind, 'tls');
      assert.match(err.message, /not trusted.*TLS configuration node/s);
      return true;
    });
    const trusted = make();
    assert.equal(typeof (await trusted.instrument.isErrorHandlerRegistered()), 'boolean');
  });

  it('reports an HTML error page, non-JSON and an unreachable host clearly', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 500, htmlErrors: true });
    const c = make({ retries: 0 });
    await assert.rejects(c.prep.getPolicySettings(), /500/);
    sim.clearFaults();
    const dead = make({ baseUrl: 'http://127.0.0.1:9', retries: 0 });
    await assert.rejects(dead.prep.getPolicySettings(), /cannot reach the preparation service.*connection refused/);
  });

  describe('against a misbehaving server', function () {
    let server: http.Server;
    let other: http.Server;
    let url = '';
    const seen: http.IncomingHttpHeaders[] = [];

    before(async function () {
      other = http.createServer((req, res) => {
        seen.push(req.headers);
        res.end('{}');
      });
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      server = http.createServer((req, res) => {
        if (req.url?.endsWith('/authenticate')) {
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ token: 'a.b.c', expiresIn: 5 }));
        } else if (req.url?.includes('policy')) {
          res.setHeader('Content-Type', 'text/html');
          res.end('<html><body>Welcome</body></html>');
        } else if (req.url?.includes('software')) {
          res.setHeader('Content-Type', 'application/json');
          res.end('not json');
        } else {
          res.statusCode = 302;
          res.setHeader('Location', `${otherUrl}/api/v1/steal`);
          res.end();
        }
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async function () {
      server.closeAllConnections();
      other.closeAllConnections();
      await new Promise((r) => server.close(r));
      await new Promise((r) => other.close(r));
    });

    it('names an HTML page and text that is not JSON', async function () {
      const c = make({ baseUrl: url, instrumentUrl: undefined });
      await assert.rejects(c.prep.getPolicySettings(), /answered with an HTML page instead of JSON/);
      await assert.rejects(c.prep.getSoftwareSettings(), /answered with text that is not JSON/);
    });

    it('does not follow a redirect, so the Authorization header never reaches another host', async function () {
      const c = make({ baseUrl: url, instrumentUrl: undefined });
      await assert.rejects(c.prep.listServiceRoutines(), /redirects to .*not followed/);
      assert.equal(seen.length, 0);
    });
  });
});
