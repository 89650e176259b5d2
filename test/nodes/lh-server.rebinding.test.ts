/**
 * Hostile review finding (low-medium): the cross-site guard of the lh-server editor endpoints trusts whatever Host the request
 * names. A foreign page that rebinds its own name to the Node-RED's address (DNS rebinding) is same-origin for the
 * browser (Sec-Fetch-Site: same-origin, Origin = Host = the attacker's name): without adminAuth its JSON POST to
 * /lh-server/:id/kba-password-reset (or setup-wizard, test-connection with the stored password) reaches the
 * instrument, against "nothing a foreign web page sends or reads reaches the instrument through this package".
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';

describe('lh-server admin endpoints under DNS rebinding (issue 17.3)', function () {
  const sim = useInstrument({ adminServer: true });

  it('refuses a request whose Host is not a name this Node-RED is known by', async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
    const res = await helper
      .request()
      .post('/lh-server/server/kba-password-reset')
      .set('Host', 'rebind.attacker.example:1880')
      .set('Origin', 'http://rebind.attacker.example:1880')
      .set('Sec-Fetch-Site', 'same-origin')
      .set('Content-Type', 'application/json')
      .send('{}');
    const reached = sim.requests.filter((r) => r.path === '/api/v1/authenticate/kba-password-reset').length;
    assert.equal(reached, 0, `the instrument got kba-password-reset (reply ${res.status} ${JSON.stringify(res.body)})`);
    assert.equal(res.status, 403);
  });

  it('serves the editor reached by an address, localhost, or a name listed in settings.js', async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
    for (const host of ['127.0.0.1:1880', 'localhost:1880', '[::1]:1880', '10.0.0.7']) {
      const res = await helper
        .request()
        .get('/lh-server/step-types')
        .set('Host', host)
        .set('Origin', `http://${host}`)
        .set('Sec-Fetch-Site', 'same-origin');
      assert.equal(res.status, 200, `${host}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  });
});
