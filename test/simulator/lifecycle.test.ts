import { strict as assert } from 'node:assert';
import * as http from 'node:http';

import { Simulator } from '../../src/simulator';
import { bearer, describeStatus, Harness, JSON_PATCH, problemOf, startHarness } from './helpers';

describe('simulator: prefix, request log and unknown paths', function () {
  let h: Harness;

  before(async function () {
    h = await startHarness({ prefix: '/NimbusLite' });
  });
  after(async function () {
    await h.close();
  });

  it('serves A under the prefix only, and /sim outside it', async function () {
    assert.match(h.sim.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/NimbusLite$/);
    const token = await h.login();
    assert.equal((await h.a.get('/api/v1/settings/policy-settings', bearer(token))).status, 200);
    const outside = await h.a.get(`${h.sim.controlUrl}/api/v1/settings/policy-settings`, bearer(token));
    assert.equal(outside.status, 404);
    problemOf(outside);
    assert.equal((await h.control.get('/state')).status, 200);
  });

  it('logs A and B requests without the prefix, with body, content type and status', async function () {
    h.sim.clearRequests();
    await h.a.post(
      '/api/v1/authenticate',
      { username: 'admin', password: 'labwire' },
      { headers: { 'Content-Type': JSON_PATCH } },
    );
    await h.b.get('/api/vector/v3/error-handler');
    const [a, b] = h.sim.requests;
    assert.equal(a.api, 'A');
    assert.equal(a.path, '/api/v1/authenticate');
    assert.equal(a.contentType, JSON_PATCH);
    assert.deepEqual(a.body, { username: 'admin', password: 'labwire' });
    assert.equal(a.status, 200);
    assert.equal(b.api, 'B');
    assert.equal(b.status, 401);
  });

  it('unknown paths are 404 and a wrong method is 405, as problem details', async function () {
    const token = await h.login();
    const missing = await h.a.get('/api/v1/nothing', bearer(token));
    assert.equal(missing.status, 404);
    problemOf(missing);
    const wrongMethod = await h.a.patch('/api/v1/settings/policy-settings', {}, bearer(token));
    assert.equal(wrongMethod.status, 405);
  });
});

describe('simulator: faults', function () {
  let h: Harness;
  let token: string;

  before(async function () {
    h = await startHarness();
    token = await h.login();
  });
  afterEach(function () {
    h.sim.clearFaults();
  });
  after(async function () {
    await h.close();
  });

  it('statusRate 1 answers 503 problem details on A and B, not on /sim', async function () {
    h.sim.setFaults({ statusRate: 1 });
    const a = await h.a.get('/api/v1/settings/policy-settings', bearer(token));
    assert.equal(a.status, 503);
    problemOf(a);
    assert.equal((await h.b.get('/api/vector/v3/error-handler', bearer(token))).status, 503);
    assert.equal((await h.control.get('/state')).status, 200);
  });

  it('htmlErrors sends an HTML page with the fault status', async function () {
    h.sim.setFaults({ statusRate: 1, statusCode: 502, htmlErrors: true });
    const res = await h.a.get('/api/v1/settings/policy-settings', bearer(token));
    assert.equal(res.status, 502);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(String(res.data), /<html>/);
  });

  it('resetRate 1 destroys the socket (socket hang up)', async function () {
    h.sim.setFaults({ resetRate: 1 });
    await assert.rejects(h.a.get('/api/v1/settings/policy-settings', bearer(token)), (err: Error & { code?: string }) => {
      assert.match(`${err.code} ${err.message}`, /ECONNRESET|socket hang up/);
      return true;
    });
    assert.equal(h.sim.requests.at(-1)?.status, 0);
  });

  it('timeoutRate 1 holds the request until timeoutHoldMs', async function () {
    h.sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 200 });
    const started = Date.now();
    await assert.rejects(h.a.get('/api/v1/settings/policy-settings', bearer(token)));
    // a lower bound: a busy machine only makes it longer (a timer never fires early)
    assert.ok(Date.now() - started >= 180);
  });

  it('latencyMs delays every answer', async function () {
    h.sim.setFaults({ latencyMs: 150 });
    const started = Date.now();
    const res = await h.a.get('/api/v1/settings/policy-settings', bearer(token));
    assert.equal(res.status, 200);
    // a lower bound: a busy machine only makes it longer (a timer never fires early)
    assert.ok(Date.now() - started >= 140);
  });

  it('rejects nonsense fault settings', function () {
    assert.throws(() => h.sim.setFaults({ statusRate: 2 }), RangeError);
    assert.throws(() => h.sim.setFaults({ clockSpeed: 0 }), RangeError);
  });
});

describe('simulator: /sim control API', function () {
  let h: Harness;
  let token: string;

  before(async function () {
    h = await startHarness();
    token = await h.login();
  });
  after(async function () {
    await h.close();
  });

  it('injects runtime and instrument errors, resolves them, reports state', async function () {
    const created = await h.control.post('/errors', { title: 'From flow', severity: 'Error' });
    assert.equal(created.status, 201, describeStatus(created));
    const id = (created.data as { id: string }).id;
    const pending = (await h.a.get('/api/v1/errors/check-for-pending-errors', bearer(token))).data as {
      id: string;
      title: string;
    }[];
    assert.deepEqual(
      pending.map((p) => [p.id, p.title]),
      [[id, 'From flow']],
    );
    assert.equal((await h.control.post(`/errors/${id}/resolve`)).status, 204);
    assert.equal((await h.control.post('/errors/nope/resolve')).status, 404);
    const inst = await h.control.post('/instrument-errors', { title: 'Door open' });
    assert.equal(inst.status, 201);
    const state = (await h.control.get('/state')).data as Record<string, unknown>;
    assert.equal(state.pendingErrors, 0);
    assert.equal(state.instrumentErrors, 1);
    assert.equal(state.protocols, 2);
  });

  it('sets and clears faults, reads and clears the log, resets', async function () {
    assert.equal((await h.control.put('/faults', { statusRate: 1, statusCode: 500 })).status, 200);
    assert.equal((await h.a.get('/api/v1/settings/policy-settings', bearer(token))).status, 500);
    assert.equal((await h.control.put('/faults', { statusRate: 5 })).status, 400);
    assert.equal((await h.control.delete('/faults')).status, 204);
    assert.equal((await h.a.get('/api/v1/settings/policy-settings', bearer(token))).status, 200);
    const log = (await h.control.get('/requests')).data as { path: string }[];
    assert.ok(log.length > 0);
    assert.equal((await h.control.delete('/requests')).status, 204);
    assert.equal(h.sim.requests.length, 0);
    h.sim.injectPendingError();
    assert.equal((await h.control.post('/reset')).status, 204);
    assert.equal(h.sim.state.history.length, 0);
    assert.equal((await h.control.get('/nothing')).status, 404);
  });

  it('POST /sim/restart answers, then restarts on the same port', async function () {
    const before = h.sim.controlUrl;
    const res = await h.control.post('/restart', { downtimeMs: 0 });
    assert.equal(res.status, 202);
    const deadline = Date.now() + 3000;
    let state = 0;
    while (Date.now() < deadline) {
      state = await h.control.get('/state').then(
        (r) => r.status,
        () => 0,
      );
      if (state === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(state, 200);
    assert.equal(h.sim.controlUrl, before);
  });
});

describe('simulator: restart and stop', function () {
  it('restart() keeps state, tokens and ports; the service is down in between', async function () {
    const h = await startHarness();
    try {
      const token = await h.login();
      await h.b.post(
        '/api/vector/v3/error-handler',
        JSON.stringify('lab1'),
        bearer(token, 'application/json; x-api-version=3.0'),
      );
      const e = h.sim.injectPendingError();
      const urls = [h.sim.baseUrl, h.sim.instrumentUrl];
      // restart() stops first: the service is down from the moment that stop has closed the servers
      const stop = h.sim.stop.bind(h.sim);
      const stopped = new Promise<void>((resolve) => {
        h.sim.stop = () => stop().then(resolve);
      });
      const restarting = h.sim.restart(300);
      await stopped;
      h.sim.stop = stop;
      await assert.rejects(h.a.get('/api/v1/errors', bearer(token)), /ECONNREFUSED/);
      await restarting;
      assert.deepEqual([h.sim.baseUrl, h.sim.instrumentUrl], urls);
      const pending = (await h.a.get('/api/v1/errors/check-for-pending-errors', bearer(token))).data as { id: string }[];
      assert.deepEqual(
        pending.map((p) => p.id),
        [e.id],
      );
      assert.equal((await h.b.get('/api/vector/v3/error-handler', bearer(token))).data, true);
    } finally {
      await h.close();
    }
  });

  it('stop() closes servers and open sockets and leaves no handle behind', async function () {
    const count = (): number =>
      process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'TCPSocketWrap').length;
    const baseline = count();
    const sim = new Simulator();
    await sim.start();
    const agent = new http.Agent({ keepAlive: true });
    // an idle keep-alive connection and a request held forever by the timeout fault
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${sim.controlUrl}/sim/state`, { agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
    sim.setFaults({ timeoutRate: 1 });
    const held = new Promise<string>((resolve) => {
      http
        .get(`${sim.baseUrl}/api/v1/errors`, { agent: new http.Agent() }, () => resolve('answered'))
        .on('error', (err) => resolve(err.message));
    });
    while (sim.requests.length === 0) await new Promise((r) => setImmediate(r));
    assert.ok(count() > baseline);
    await sim.stop();
    assert.match(await held, /socket hang up|ECONNRESET/);
    agent.destroy();
    await new Promise((r) => setImmediate(r));
    assert.equal(count(), baseline, JSON.stringify(process.getActiveResourcesInfo()));
  });

  it('stop() during the downtime of restart() settles the restart and stays stopped', async function () {
    const sim = new Simulator();
    await sim.start();
    const restarting = sim.restart(60_000);
    await new Promise((r) => setImmediate(r));
    await sim.stop();
    await restarting;
    assert.equal((sim.summary() as { running: boolean }).running, false);
  });

  it('start() fails clearly when the port is taken', async function () {
    const a = new Simulator();
    await a.start();
    const port = Number(new URL(a.controlUrl).port);
    const b = new Simulator({ port });
    try {
      await assert.rejects(b.start(), /EADDRINUSE/);
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});

describe('simulator: seed and reset', function () {
  it('seed: false starts without protocols or service routines', async function () {
    const sim = new Simulator({ seed: false });
    assert.equal(sim.state.protocols.size, 0);
    assert.equal(sim.state.serviceRoutines.length, 0);
    assert.equal(sim.state.softwareSettings.defaultAmbientTemperature, 22);
  });

  it('reset() restores the seed and clears lockouts, handlers, errors, faults and the log', async function () {
    const h = await startHarness({ policy: { maximumLoginAttempts: 1 } });
    try {
      const token = await h.login();
      await h.a.post(
        '/api/v1/authenticate',
        { username: 'admin', password: 'wrong' },
        { headers: { 'Content-Type': JSON_PATCH } },
      );
      await assert.rejects(h.login(), /locked/i);
      h.sim.addProtocol('extra');
      h.sim.injectInstrumentError();
      h.sim.setFaults({ latencyMs: 1 });
      h.sim.reset();
      assert.equal(h.sim.state.protocols.size, 2);
      assert.equal(h.sim.state.instrumentErrors.length, 0);
      assert.equal(h.sim.requests.length, 0);
      assert.deepEqual(h.sim.faults, {});
      await h.login();
      assert.equal(
        (await h.a.get('/api/v1/authenticate/check-authentication', bearer(token))).status,
        200,
        'issued tokens stay valid',
      );
    } finally {
      await h.close();
    }
  });
});

describe('simulator: ports that survive a restart', function () {
  it('asked for any port, listens below the kernel ephemeral range, and starts again on the same ports', async function () {
    const [low] = (await import('node:fs')).readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const sims = [new Simulator(), new Simulator(), new Simulator()];
    try {
      for (const sim of sims) await sim.start();
      for (const sim of sims) {
        for (const url of [sim.baseUrl, sim.instrumentUrl]) {
          const port = Number(new URL(url).port);
          // an outgoing connection of any process takes its local port from that range: a restart on a port there
          // may find it taken (EADDRINUSE, seen in a loaded test run)
          assert.ok(port >= 20000 && port < Number(low), `${url} below ${low}`);
        }
      }
      const before = sims.map((s) => [s.baseUrl, s.instrumentUrl]);
      for (const sim of sims) await sim.stop();
      for (const sim of sims) await sim.start();
      assert.deepEqual(
        sims.map((s) => [s.baseUrl, s.instrumentUrl]),
        before,
      );
    } finally {
      for (const sim of sims) await sim.stop();
    }
  });
});
