/**
 * Review finding (logins, lockout): the lh-server nodes of one instrument share its logins (its home's LoginGate), so
 * a wrong password costs one failed login per deploy however many nodes carry it. The gate keyed the credentials by
 * the user name as typed, while the instrument (an ASP.NET service, and the simulator that models it) matches user
 * names in any letter case and counts every failure against the one user: nodes with `admin`, `Admin` and `ADMIN`
 * and one wrong password sent it once each at a deploy, three failed logins toward the instrument's lockout, while
 * every node said "one attempt per deploy, for every lh-server node of this instrument". The gate now keys a user name
 * in lower case.
 *
 * Property test (seeded): random sets of lh-server nodes of one instrument, each with the user name in a random letter
 * case and the right password or one of two wrong ones, all firing at once, over two deploys: the instrument sees one
 * failed login per distinct wrong password per deploy, and the right password works whatever the case.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;

function randomCase(rng: Rng, text: string): string {
  return [...text].map((c) => (rng.chance(0.5) ? c.toUpperCase() : c)).join('');
}

describe('review: a user name in another letter case is the same user at the login gate', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { policy: { maximumLoginAttempts: 100 } }, afterEach: () => restartMemory() });

  const failedLogins = (): number =>
    sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate' && r.status >= 400).length;

  function flow(users: { username: string; password: string }[]): {
    nodes: Msg[];
    credentials: Record<string, Record<string, string>>;
  } {
    const nodes: Msg[] = [];
    const credentials: Record<string, Record<string, string>> = {};
    users.forEach((user, i) => {
      const f = serverFlow(sim, { id: `s${i}`, withB: false, credentials: user });
      nodes.push(...f.nodes, {
        id: `get${i}`,
        type: 'lh-settings',
        server: `s${i}`,
        operation: 'get-software-settings',
        wires: [['out']],
      });
      Object.assign(credentials, f.credentials);
    });
    nodes.push(
      { id: 'catcher', type: 'catch', wires: [['caught']] },
      { id: 'out', type: 'helper' },
      { id: 'caught', type: 'helper' },
    );
    return { nodes, credentials };
  }

  /** Fires every lh-settings node in one tick; resolves once each has answered (out or caught). */
  async function fireAll(count: number): Promise<{ out: Msg[]; caught: Msg[] }> {
    const out: Msg[] = [];
    const caught: Msg[] = [];
    const all = new Promise<void>((resolve) => {
      const add = (list: Msg[]) => (msg: Msg) => {
        list.push(msg);
        if (out.length + caught.length === count) resolve();
      };
      helper.getNode('out').on('input', add(out));
      helper.getNode('caught').on('input', add(caught));
    });
    for (let i = 0; i < count; i++) helper.getNode(`get${i}`).receive({ topic: `get${i}` });
    await all;
    helper.getNode('out').removeAllListeners('input');
    helper.getNode('caught').removeAllListeners('input');
    return { out, caught };
  }

  it('property: N nodes, user names in random letter case, right or wrong passwords, two deploys (seeded)', async function () {
    const rng = new Rng(2807);
    for (let trial = 0; trial < 8; trial++) {
      const wrong = [`wrong-${rng.int(1000, 9999)}`, `Wrong-${rng.int(1000, 9999)}`];
      const users = Array.from({ length: rng.int(2, 5) }, () => ({
        username: randomCase(rng, USER.username),
        password: rng.pick([USER.password, ...wrong]),
      }));
      // at least two spellings of the user name with one wrong password: the case this test is about
      users.push({ username: USER.username.toUpperCase(), password: wrong[0] }, { username: USER.username, password: wrong[0] });
      const distinctWrong = new Set(users.filter((u) => u.password !== USER.password).map((u) => u.password)).size;
      const label = `trial ${trial}: ${JSON.stringify(users)}`;
      const f = flow(users);
      for (const deploy of [1, 2]) {
        const before = failedLogins();
        if (deploy === 1) await loadFlow(f.nodes, f.credentials);
        else await helper.setFlows(f.nodes as never, 'full', f.credentials as never);
        const first = await fireAll(users.length);
        await fireAll(users.length); // held back: nothing more is sent
        assert.equal(failedLogins() - before, distinctWrong, `${label}, deploy ${deploy}: one failed login per wrong password`);
        assert.equal(
          first.out.length,
          users.filter((u) => u.password === USER.password).length,
          `${label}: the right password works`,
        );
      }
      await helper.unload();
      restartMemory();
      sim.reset();
    }
  });
});
