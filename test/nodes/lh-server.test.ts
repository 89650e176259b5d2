import assert from 'node:assert/strict';

import { LiquidHandlerClient } from '../../src/client';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, runtimeSettings, serverFlow, USER } from '../support/runtime';
import { until } from '../support/until';

interface Report {
  ok: boolean;
  checks: { name: string; ok: boolean; message: string }[];
}

describe('lh-server', function () {
  const sim = useInstrument({ simulator: { policy: { maximumLoginAttempts: 3 } }, adminServer: true });

  async function testConnection(body: Record<string, unknown>): Promise<Report> {
    const res = await helper.request().post('/lh-server/test-connection').send(body);
    assert.equal(res.status, 200);
    return res.body as Report;
  }

  it('Test connection reports A, the login and B in plain words', async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
    const report = await testConnection({
      id: 'server',
      baseUrl: sim.baseUrl,
      instrumentUrl: sim.instrumentUrl,
      tls: 'server-tls',
      username: USER.username,
      password: '__PWRD__',
    });
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.deepEqual(
      report.checks.map((c) => c.name),
      ['A', 'login', 'instrument', 'B'],
    );
    assert.match(report.checks[1].message, /logged in as "admin" \(check-authentication accepted the session\)/);
    assert.match(report.checks[2].message, /Simulated workstation, serial SIM-0001; software: Preparation service 3\.4\.0/);
    assert.ok(sim.requests.some((r) => r.path === '/api/v1/authenticate/check-authentication' && r.authorization));
  });

  it('Test connection says what is wrong with TLS, and trusts the bundled simulator CA when asked', async function () {
    const plain = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl, ...USER });
    assert.equal(plain.ok, false);
    const b = plain.checks.find((c) => c.name === 'B');
    assert.match(b?.message ?? '', /not trusted.*TLS configuration node/s);
    const withCa = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl, simulatorCa: true, ...USER });
    assert.equal(withCa.ok, true, JSON.stringify(withCa));
  });

  it('Test connection tries a wrong password exactly once and never shows it', async function () {
    const report = await testConnection({ baseUrl: sim.baseUrl, username: 'admin', password: 'guess-1' });
    assert.equal(report.ok, false);
    const login = report.checks.find((c) => c.name === 'login');
    assert.match(login?.message ?? '', /rejected/);
    assert.doesNotMatch(JSON.stringify(report), /guess-1/);
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'POST').length, 1);
  });

  it('Test connection names an unreachable service', async function () {
    const report = await testConnection({ baseUrl: 'http://127.0.0.1:9', username: 'admin', password: 'x' });
    assert.equal(report.ok, false);
    assert.match(report.checks[0].message, /cannot reach the preparation service/);
  });

  it('logs out on redeploy', async function () {
    const server = serverFlow(sim);
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
      ],
      server.credentials,
    );
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    await helper.unload();
    const logout = sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'DELETE');
    assert.equal(logout.length, 1);
  });

  it('an operation node without a config node fails clearly and sends nothing', async function () {
    await loadFlow([
      { id: 'clear', type: 'lh-clear-errors', server: '', wires: [['out']] },
      { id: 'out', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ]);
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 1 });
    const msg = await caught;
    assert.match(String((msg._error as { message: string }).message), /no instrument configured/);
    assert.equal(sim.requests.length, 0);
  });
});

describe('lh-server Test connection: password expiry and an instrument that does not tell its name', function () {
  const sim = useInstrument({ simulator: { policy: { passwordExpires: 2 } }, adminServer: true });
  const post = async (body: Record<string, unknown>): Promise<Report> =>
    (await helper.request().post('/lh-server/test-connection').send(body)).body as Report;

  it('Test connection names the password expiry when it is near, and goes on when the instrument does not tell its name', async function () {
    sim.configureMachine({ offered: false });
    const report = await post({ baseUrl: sim.baseUrl, ...USER });
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.match(report.checks[1].message, /the password of user "admin" expires in 2 days/);
    assert.match(report.checks[2].message, /does not tell its name or software versions/);
  });
});

describe('lh-server dialog actions: setup-wizard and kba-password-reset', function () {
  const sim = useInstrument({ adminServer: true });
  const post = async (
    path: string,
    type = 'application/json',
  ): Promise<{ status: number; body: { message: string; error: string } }> => {
    const res = await helper.request().post(path).set('Content-Type', type).send('{}');
    return { status: res.status, body: res.body as { message: string; error: string } };
  };

  it('runs setup-wizard once through the deployed node, answers in plain words and never hands the token to the editor', async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
    const res = await post('/lh-server/server/setup-wizard');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.message, /setup completed on the instrument: "admin" can log in/);
    assert.doesNotMatch(JSON.stringify(res.body), /token|eyJ/i);
    const again = await post('/lh-server/server/setup-wizard');
    assert.equal(again.status, 502);
    assert.match(again.body.error, /already been completed/);
    const reset = await post('/lh-server/server/kba-password-reset');
    assert.equal(reset.status, 200);
    assert.match(reset.body.message, /password reset accepted/);
    assert.equal((await post('/lh-server/server/kba-password-reset', 'application/x-www-form-urlencoded')).status, 415);
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/authenticate/kba-password-reset').length, 1);
  });
});

describe('lh-server session health check (settings.js liquidHandler.sessionCheckSeconds, issue 21.3)', function () {
  const sim = useInstrument();
  const checks = (): number => sim.requests.filter((r) => r.path === '/api/v1/authenticate/check-authentication').length;
  const said = (): number =>
    (helper as unknown as { log(): { args: { msg: unknown }[][] } })
      .log()
      .args.filter((a) => /session check \(check-authentication\) failed/.test(String(a[0]?.msg))).length;
  before(function () {
    runtimeSettings({ liquidHandler: { sessionCheckSeconds: 0.1 } });
  });
  after(function () {
    runtimeSettings({});
  });

  it('checks while logged in and says a failing check once per failure streak', async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
    assert.equal(checks(), 0, 'no login only for the check');
    const node = helper.getNode('server') as unknown as { client: LiquidHandlerClient };
    await node.client.prep.getSoftwareSettings(); // what any operation node does first
    await until(() => checks() >= 2, 'two checks of the session');
    const before = said();
    sim.setFaults({ statusRate: 1, statusCode: 503, methods: ['GET'] });
    await until(() => said() > before, 'the failing check logged', 20000);
    const failing = checks();
    await until(() => checks() >= failing + 3, 'more failing checks', 20000);
    assert.equal(said() - before, 1, 'a failure streak is logged once');
    sim.clearFaults();
    const held = checks();
    await until(() => checks() >= held + 2, 'checks that hold again');
    sim.setFaults({ statusRate: 1, statusCode: 503, methods: ['GET'] });
    await until(() => said() > before + 1, 'a second failure streak', 20000);
    assert.equal(said() - before, 2, 'a new streak after the check held is logged again');
    sim.clearFaults();
  });
});
