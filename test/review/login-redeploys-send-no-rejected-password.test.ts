/**
 * Review62 finding (lockout): every deploy let a rejected password go once more, as "a user action". A full deploy
 * (the editor's default) restarts every lh-server node, so a user working on other flows of a Node-RED whose lh-server
 * holds a wrong password locked that user out of an instrument that locks after 3 failed logins by deploying three
 * times, never touching the lh-server node. A rejected user name and password are now not sent again by a deploy:
 * changed credentials are tried at once, and the same ones after the cause is fixed on the instrument (a password reset
 * there, a lock that ended) by Test connection, which then lets every lh-server node of that user log in again.
 */
import assert from 'node:assert/strict';

import { chooseCredentials, targetOf, testedDeployedLogin } from '../../src/nodes/lh-server/admin-guard';
import { fireThrough, settingsReadNodes } from '../support/fire-through';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: deploys never send a rejected password again', function () {
  this.timeout(30000);
  const sim = useInstrument({
    simulator: { policy: { maximumLoginAttempts: 3 } },
    adminServer: true,
    afterEach: () => restartMemory(),
  });

  const failedLogins = (): number =>
    sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate' && r.status >= 400).length;

  function flow(password: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const f = serverFlow(sim, { withB: false, credentials: { username: USER.username, password } });
    return {
      nodes: [...f.nodes, ...settingsReadNodes()],
      credentials: f.credentials,
    };
  }

  it('five full deploys with a wrong password cost one failed login; Test connection, once it is right, frees it', async function () {
    const f = flow('wrong-but-kept');
    await loadFlow(f.nodes, f.credentials);
    assert.equal((await fireThrough('get')).ok, false);
    assert.equal(failedLogins(), 1);
    for (let deploy = 0; deploy < 5; deploy++) {
      await helper.setFlows(f.nodes as never, 'full', f.credentials as never); // other flows edited, Deploy (full)
      const r = await fireThrough('get');
      assert.equal(r.ok, false);
      assert.match(String((r.msg.error as Msg).message), /rejected \(401\).*not sent again.*Test connection/);
    }
    assert.equal(failedLogins(), 1, 'no deploy sent the rejected password again');
    assert.equal(sim.state.failedLogins, 1);

    // the administrator sets the instrument's password to the one Node-RED holds: Test connection tries it, once
    sim.setUserPassword(USER.username, 'wrong-but-kept');
    const res = await helper
      .request()
      .post('/lh-server/test-connection')
      // the stored password typed again (not left as stored): the same login, so it frees the node too
      .send({ id: 'server', baseUrl: sim.baseUrl, instrumentUrl: '', tls: '', username: 'ADMIN', password: 'wrong-but-kept' });
    assert.equal((res.body as { ok: boolean }).ok, true, JSON.stringify(res.body));
    assert.equal((await fireThrough('get')).ok, true);

    // changed credentials are tried at once on deploy
    sim.setUserPassword(USER.username, USER.password);
    const g = flow(USER.password);
    await helper.setFlows(g.nodes as never, 'full', g.credentials as never);
    assert.equal((await fireThrough('get')).ok, true);
    assert.equal(failedLogins(), 1);
  });

  it('only a test of the deployed login frees it: not a new password beside the stored B token, nor another address', function () {
    const config = { baseUrl: 'http://10.0.0.5/NimbusLite', instrumentUrl: 'https://10.0.0.5', tls: 't1' };
    const deployed = { target: targetOf(config), credentials: { username: 'admin', password: 'kept', instrumentToken: 'tok' } };
    const cases: [Record<string, unknown>, boolean][] = [
      [{ ...config, username: 'admin', password: '__PWRD__', instrumentToken: '__PWRD__' }, true],
      [{ ...config, username: 'Admin', password: 'kept', instrumentToken: '__PWRD__' }, true],
      [{ ...config, username: 'admin', password: 'new-one', instrumentToken: '__PWRD__' }, false], // the B token stored
      [{ ...config, username: 'other', password: '__PWRD__', instrumentToken: '__PWRD__' }, false],
      [{ ...config, baseUrl: 'http://10.0.0.6/NimbusLite', username: 'admin', password: 'kept', instrumentToken: '' }, false],
    ];
    for (const [body, frees] of cases) {
      const choice = chooseCredentials(body, deployed);
      assert.ok(choice.ok, JSON.stringify(body));
      if (choice.ok) assert.equal(testedDeployedLogin(body, deployed, choice.credentials), frees, JSON.stringify(body));
    }
  });
});
