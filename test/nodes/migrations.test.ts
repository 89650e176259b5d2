import assert from 'node:assert/strict';

import { loadNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('config migrations in a running Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('lh-submit-recovery written without kind (by hand or by an API) submits a recovery, the dialog default', async function () {
    const injected = sim.injectInstrumentError();
    sim.state.handlers.add('nodered1');
    const submit = await loadNode(sim, { id: 'submit', type: 'lh-submit-recovery' }, { server: { withB: true } });
    const out = await submit.run({ payload: injected, selectedActionId: 1 });
    assert.equal((out.payload as Msg).success, true);
    const sent = sim.requests.filter(
      (r) => r.method === 'POST' && r.path.endsWith(`/instrument-errors/${injected.uuid}/recovery`),
    );
    assert.equal(sent.length, 1);
  });

  it('lh-settings written with only its type and server reads the software settings (the dialog default)', async function () {
    const settings = await loadNode(sim, { id: 'settings', type: 'lh-settings' });
    const out = await settings.run({});
    assert.equal(out.statusCode, 200);
    assert.ok(sim.requests.some((r) => r.method === 'GET' && /software-settings/.test(r.path)));
  });
});
