// Issue 18, point 1: importing an example never stops the user's flows. Each example file goes into a standard
// Node-RED (this package installed from its tarball, only the core nodes, plus the packages the example's title names)
// and all flows start: "Started flows", never "Waiting for missing types" (which stops every flow, the user's own too).
// And example 06's LIMS endpoint refuses what a foreign web page can send (a form post): only the LIMS starts runs.
import assert from 'node:assert/strict';
import { randomBytes } from 'crypto';

import { Simulator } from '../../src/simulator';
import { until } from '../support/until';
import {
  example,
  exampleFiles,
  FlowNode,
  freshUserDir,
  namedPackages,
  neededPackages,
  StandardRed,
  startRed,
} from './standard-red';

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const LIMS_TOKEN = `lims-${randomBytes(12).toString('hex')}`;

/** The example pointed at the test's simulator, its login in the lh-server's credentials (as the editor sends them). */
function aimed(nodes: FlowNode[], sim: Simulator): FlowNode[] {
  return nodes.map((n) =>
    n.type === 'lh-server'
      ? { ...n, baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl, credentials: { username: 'admin', password: PASSWORD } }
      : n,
  );
}

/** What the user's own flow stands for: it must keep running whatever example is imported next to it. */
const USERS_FLOW: FlowNode[] = [
  { id: 'user-tab', type: 'tab', label: 'the lab' },
  { id: 'user-in', type: 'http in', z: 'user-tab', url: '/users-own', method: 'get', wires: [['user-res']] },
  { id: 'user-res', type: 'http response', z: 'user-tab', statusCode: '200', wires: [] },
];

function assertStarted(log: string, what: string): void {
  assert.doesNotMatch(log, /Waiting for missing types/, `${what}: ${log}`);
  assert.match(log, /Started flows/, `${what}: ${log}`);
}

describe('standard Node-RED: the examples (issue 18 point 1)', function () {
  this.timeout(120_000);
  let sim: Simulator;
  before(async function () {
    sim = new Simulator({ users: [{ username: 'admin', password: PASSWORD }] });
    await sim.start();
  });
  after(async function () {
    await sim.stop();
  });

  describe('with only the core nodes and this package', function () {
    let red: StandardRed;
    before(async function () {
      red = await startRed(await freshUserDir(), { env: { LIMS_TOKEN } });
    });
    after(async function () {
      await red?.stop();
    });

    const core = exampleFiles('examples');
    it('Import > Examples (examples/) holds only examples that need no other package (issue 32 item 3)', function () {
      assert.deepEqual(
        core.filter((f) => neededPackages(f).length > 0),
        [],
      );
      for (const file of exampleFiles('examples-extra')) assert.ok(neededPackages(file).length > 0, `${file} names no package`);
    });

    it('has a core version of every example that needs no other package (01 and 06 among them)', function () {
      assert.ok(core.some((f) => f.startsWith('01 ')) && core.some((f) => f.startsWith('06 ')), core.join(', '));
    });

    for (const file of core) {
      it(`"${file}" starts, next to the user's own flow`, async function () {
        const log = await red.deploy([...USERS_FLOW, ...aimed(example(file), sim)]);
        assertStarted(log, file);
        assert.equal((await red.request('GET', '/users-own')).status, 200, "the user's own flow runs");
      });
    }

    it('all core examples together start', async function () {
      const seen = new Set<string>();
      const all = core.flatMap((f) => aimed(example(f), sim)).filter((n) => !seen.has(n.id) && seen.add(n.id));
      assertStarted(await red.deploy([...USERS_FLOW, ...all]), 'all core examples');
    });

    it('all core examples as imported: one lh-server, the simulator found from LH_SIM_* with the defaults, no error logged', async function () {
      const seen = new Set<string>();
      const all = core.flatMap((f) => example(f)).filter((n) => !seen.has(n.id) && seen.add(n.id));
      const servers = all.filter((n) => n.type === 'lh-server');
      assert.deepEqual(
        servers.map((n) => [n.id, n.baseUrl, n.instrumentUrl]),
        [
          [
            'lh-server-sim',
            'http://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_PORT:-8090}',
            'https://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_HTTPS_PORT:-8443}',
          ],
        ],
        'one lh-server for all, its host and port from the environment',
      );
      const asImported = all.map((n) =>
        n.type === 'lh-server' ? { ...n, credentials: { username: 'admin', password: PASSWORD } } : n,
      );
      const own = await startRed(await freshUserDir(), {
        env: { LH_SIM_PORT: String(new URL(sim.baseUrl).port), LH_SIM_HTTPS_PORT: String(new URL(sim.instrumentUrl).port) },
      });
      try {
        const from = own.log().length;
        sim.clearRequests();
        assertStarted(await own.deploy([...USERS_FLOW, ...asImported]), 'all core examples as imported');
        const polled = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
        await until(() => polled() >= 2, 'the examples polling the simulator at 127.0.0.1 and the LH_SIM_PORT', 30_000);
        // an error raised: example 02 without CHAT_WEBHOOK_URL and LH_PUBLIC_URL posts nowhere (no getaddrinfo ENOTFOUND lh)
        sim.injectPendingError({ title: 'Clot detected' });
        const after = polled();
        await until(() => polled() >= after + 2, 'two more polls after the error', 30_000);
        const log = own.log().slice(from);
        assert.doesNotMatch(log, /getaddrinfo|ENOTFOUND/, log);
        assert.deepEqual(
          log.split('\n').filter((l) => /\[error\]/.test(l) && !/LH_PUBLIC_URL is not set/.test(l)),
          [],
          'no error in the log',
        );
        assert.equal((await own.request('GET', '/users-own')).status, 200, "the user's own flow runs");
      } finally {
        await own.stop();
      }
    });

    describe('06: the LIMS endpoint starts runs for the LIMS only', function () {
      before(async function () {
        sim.runs.setSpeed(300);
        assertStarted(await red.deploy(aimed(example('06 Start a run'), sim)), '06');
      });
      const created = (): number => sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create').length;
      const post = (body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> =>
        red.request('POST', '/lims/run', body, headers);
      const json = JSON.stringify({ protocol: 'Demo protocol', simulate: true });

      it('refuses a form post, as a foreign web page in an operator browser sends it, and starts nothing', async function () {
        sim.clearRequests();
        const form = 'protocol=Demo+protocol&simulate=true';
        const res = await post(form, { 'Content-Type': 'application/x-www-form-urlencoded' });
        assert.equal(res.status, 403, res.text);
        assert.match(res.text, /X-LIMS-Token/);
        // a page's form can carry a token field, and a text/plain body that is JSON: still not a LIMS request
        assert.equal((await post(json, { 'Content-Type': 'text/plain', 'X-LIMS-Token': LIMS_TOKEN })).status, 415);
        assert.equal(
          (await post(`${form}&token=${LIMS_TOKEN}`, { 'Content-Type': 'application/x-www-form-urlencoded' })).status,
          403,
        );
        assert.equal(created(), 0);
      });

      it('refuses JSON with a wrong or empty token', async function () {
        sim.clearRequests();
        for (const token of ['', 'x', `${LIMS_TOKEN}x`, LIMS_TOKEN.slice(1)]) {
          const res = await post(json, { 'Content-Type': 'application/json', 'X-LIMS-Token': token });
          assert.equal(res.status, 403, `token ${JSON.stringify(token)}: ${res.text}`);
        }
        assert.equal(created(), 0);
      });

      it('starts the run for JSON with the token: 202 with the run id', async function () {
        sim.clearRequests();
        const res = await post(json, { 'Content-Type': 'application/json; charset=utf-8', 'X-LIMS-Token': LIMS_TOKEN });
        assert.equal(res.status, 202, res.text);
        assert.equal((JSON.parse(res.text) as { protocolName: string }).protocolName, 'Demo protocol');
        assert.equal(created(), 1);
      });
    });
  });

  describe('with the packages an example names installed', function () {
    const needing = exampleFiles('examples-extra');
    const packages = [...new Set(needing.flatMap(neededPackages))];
    let red: StandardRed;
    before(async function () {
      // the versions this checkout tests with, from npm's cache (the registry is asked only for what is not there)
      red = await startRed(await freshUserDir(namedPackages()));
    });
    after(async function () {
      await red?.stop();
    });

    it('names e-mail (01, 06) and the dashboard (07) in the titles', function () {
      assert.deepEqual(packages.sort(), ['@flowfuse/node-red-dashboard', 'node-red-node-email']);
    });

    it('06 on a Node-RED without LIMS_TOKEN: no run can be started, and the answer says how to allow it', async function () {
      sim.clearRequests();
      assertStarted(await red.deploy(aimed(example('06 Start a run'), sim)), '06');
      const res = await red.request('POST', '/lims/run', JSON.stringify({ protocol: 'Demo protocol' }), {
        'Content-Type': 'application/json',
        'X-LIMS-Token': '',
      });
      assert.equal(res.status, 403);
      assert.match(res.text, /until LIMS_TOKEN is set/);
      assert.equal(sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create').length, 0);
    });

    for (const file of needing) {
      it(`"${file}" starts`, async function () {
        assertStarted(await red.deploy([...USERS_FLOW, ...aimed(example(file), sim)]), file);
      });
    }
  });
});
