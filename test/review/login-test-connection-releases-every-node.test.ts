/**
 * Review62 finding (logins, lockout): the lh-server nodes of one instrument and user share a rejected login (the
 * home's LoginGate), and the README says the rejection holds logins back "until you deploy or press Test connection".
 * Test connection released the gate but cleared only its own node's session: another lh-server node of the same
 * instrument and user kept the rejection it had copied from the gate, so its nodes stayed "login failed" after the
 * user fixed the cause (the password restored on the instrument, the lock ended) and pressed Test connection, until a
 * redeploy. Now a release of the gate (a deploy, Test connection) clears every session held back by it; their logins
 * still go one at a time.
 */
import assert from 'node:assert/strict';

import { fireThrough } from '../support/fire-through';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;

describe('review: Test connection on one lh-server lets every lh-server of that user log in again', function () {
  this.timeout(30000);
  const sim = useInstrument({
    simulator: { policy: { maximumLoginAttempts: 100 } },
    adminServer: true,
    afterEach: () => restartMemory(),
  });

  const logins = (): { status: number }[] => sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate');

  /** `spelt`: s1's interface A URL and user name, another spelling of s0's (the same instrument and user). */
  function flow(spelt?: { baseUrl: string; username: string }): {
    nodes: Msg[];
    credentials: Record<string, Record<string, string>>;
  } {
    const nodes: Msg[] = [];
    const credentials: Record<string, Record<string, string>> = {};
    for (const i of [0, 1]) {
      const other = i === 1 && spelt;
      const f = serverFlow(sim, {
        id: `s${i}`,
        withB: false,
        credentials: { ...USER, ...(other ? { username: spelt.username } : {}) },
        config: other ? { baseUrl: spelt.baseUrl } : {},
      });
      nodes.push(...f.nodes, {
        id: `get${i}`,
        type: 'lh-settings',
        server: `s${i}`,
        operation: 'get-software-settings',
        wires: [['out']],
      });
      Object.assign(credentials, f.credentials);
    }
    nodes.push(
      { id: 'catcher', type: 'catch', wires: [['caught']] },
      { id: 'out', type: 'helper' },
      { id: 'caught', type: 'helper' },
    );
    return { nodes, credentials };
  }

  /** Spellings of the simulator's URL and the user name that name the same instrument and user (review68). */
  const rng = new Rng(SEED);
  rng.next();
  const recipes = Array.from({ length: CASES }, () => ({
    host: ['localhost', 'LOCALHOST', '127.0.0.1', 'LocalHost'][Math.floor(rng.next() * 4)],
    slash: ['', '/', '//'][Math.floor(rng.next() * 3)],
    upper: rng.next() < 0.5,
  }));
  const spelling = (r: (typeof recipes)[number]): { baseUrl: string; username: string } => {
    const u = new URL(sim.baseUrl); // known once the simulator listens
    return {
      baseUrl: `${u.protocol.toUpperCase()}//${r.host}:${u.port}${u.pathname.replace(/\/+$/, '')}${r.slash}`,
      username: r.upper ? USER.username.toUpperCase() : USER.username,
    };
  };

  for (const r of [undefined, ...recipes]) {
    const title = r
      ? `s1 at ${r.host}${r.slash ? ` with "${r.slash}"` : ''}${r.upper ? ', user in capitals' : ''}`
      : 's1 spelt as s0';
    it(`the password restored on the instrument, Test connection on s0: nodes of s1 work again, ${title} (seed ${SEED})`, async function () {
      await restoredThenTested(r && spelling(r));
    });
  }

  async function restoredThenTested(spelt?: { baseUrl: string; username: string }): Promise<void> {
    sim.setUserPassword(USER.username, 'changed-on-the-screen');
    const f = flow(spelt);
    await loadFlow(f.nodes, f.credentials);
    for (const id of ['get0', 'get1']) {
      const r = await fireThrough(id);
      assert.equal(r.ok, false);
      assert.match(String((r.msg.error as Msg).message), /login as "admin" was rejected/i);
    }
    assert.equal(logins().length, 1, 'one rejected login for both lh-server nodes');

    sim.setUserPassword(USER.username, USER.password); // the administrator put it back
    const res = await helper
      .request()
      .post('/lh-server/test-connection')
      .send({ id: 's0', baseUrl: sim.baseUrl, instrumentUrl: '', tls: '', username: USER.username, password: '__PWRD__' });
    assert.equal(res.status, 200);
    assert.equal((res.body as { ok: boolean }).ok, true, JSON.stringify(res.body));
    const afterTest = logins().length;

    const second = await fireThrough('get1');
    assert.equal(second.ok, true, `s1 is still held back: ${JSON.stringify(second.msg.error)}`);
    assert.equal((await fireThrough('get0')).ok, true);
    // each lh-server node has its session: one login each, none refused
    assert.deepEqual(
      logins()
        .slice(afterTest)
        .map((l) => l.status),
      [200, 200],
    );
    sim.clearRequests();
  }
});
