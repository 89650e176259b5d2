/**
 * Review finding (review68): since review62 a rejected (or locked-out) user name and password are held back until a
 * Test connection with them succeeds; a deploy no longer lets them go. In a Node-RED run without its editor (a
 * container started from flows.json, credentials from its environment) nobody can press Test connection, and every
 * message (the lh-server's log line, msg.error of each node, what Catch nodes get) named that button as the only way
 * out: the instrument's password reset to the one Node-RED holds, or its lock ended, the flows stayed logged out with
 * no hint that a restart of Node-RED, which tries the credentials once, is the way out there.
 *
 * Now the rejected and the locked-out message name it; a restart then logs in with one more login, not more.
 */
import assert from 'node:assert/strict';

import { fireThrough, lockOutAtInstrument } from '../support/fire-through';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: a held login says the way out without an editor', function () {
  this.timeout(30000);
  const sim = useInstrument({ simulator: { policy: { maximumLoginAttempts: 3 } }, afterEach: () => restartMemory() });

  const logins = (failed: boolean): number =>
    sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate' && r.status >= 400 === failed).length;

  async function load(): Promise<void> {
    const f = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...f.nodes,
        // two lh-server nodes of the instrument and user: the second is held by the first one's rejection
        { ...f.nodes[0], id: 'server2', name: 'sim 2', baseUrl: `${sim.baseUrl}/` },
        { id: 'get', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
        { id: 'get2', type: 'lh-settings', server: 'server2', operation: 'get-software-settings', wires: [['out']] },
        { id: 'catcher', type: 'catch', wires: [['caught']] },
        { id: 'out', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      { ...f.credentials, server2: { ...USER } },
    );
  }

  const messageOf = (r: { msg: Msg }): string => String((r.msg.error as Msg).message);

  it('rejected: the message names the restart; after the password is right on the instrument a restart logs in', async function () {
    sim.setUserPassword(USER.username, 'changed-on-the-instrument');
    await load();
    for (const id of ['get', 'get2']) {
      const r = await fireThrough(id);
      assert.equal(r.ok, false);
      assert.match(messageOf(r), /rejected \(401\).*Test connection.*without the editor: restart Node-RED/, id);
    }
    assert.equal(logins(true), 1);

    sim.setUserPassword(USER.username, USER.password); // the administrator puts it back
    assert.equal((await fireThrough('get')).ok, false, 'held until a user acts');
    await helper.unload();
    restartMemory(); // Node-RED restarted (the container)
    await load();
    assert.equal((await fireThrough('get')).ok, true);
    assert.equal((await fireThrough('get2')).ok, true);
    assert.equal(logins(true), 1, 'no failed login more');
  });

  it('locked out: the message names the restart too, for every lh-server node of the user', async function () {
    // someone at the instrument typed a wrong password three times: the user is locked
    await lockOutAtInstrument(sim.baseUrl, USER.username);
    await load();
    for (const id of ['get', 'get2']) {
      const r = await fireThrough(id);
      assert.equal(r.ok, false);
      assert.match(messageOf(r), /locked out.*Test connection.*without the editor: restart Node-RED/, id);
    }
  });
});
