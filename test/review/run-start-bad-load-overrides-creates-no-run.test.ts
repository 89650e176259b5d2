/**
 * Review finding (review66): lh-run's start checked the load-complete fields of msg.payload (residualTips, barcodes,
 * liquidVolumes) only when it sent load-complete: after it had checked readiness, validated the protocol, created the
 * run and waited for Loading. A msg.payload with `residualTips: "x"` or a NaN volume was refused then, naming the
 * field, with the run it had created left at Loading on the instrument, holding it (the next start: "a run is in
 * progress") until someone aborted it. Now they are checked as load-complete sends them before anything is sent.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: a start with bad load-complete fields creates no run', function () {
  const sim = useInstrument();
  const { load } = configuredNode(
    sim,
    { id: 'run', type: 'lh-run', operation: 'start', simulate: 'true', pollInterval: '0.05', timeout: '20' },
    { only: ['lh-server', 'lh-run'] },
  );

  const cases: { payload: Msg; field: string; rule: RegExp }[] = [
    { payload: { residualTips: 'x' }, field: 'payload.residualTips', rule: /must be an array/ },
    { payload: { barcodes: { a: 1 } }, field: 'payload.barcodes', rule: /must be an array/ },
    { payload: { liquidVolumes: [1, NaN] }, field: 'payload.liquidVolumes[1]', rule: /must be a finite number/ },
    {
      payload: { barcodes: [JSON.parse('{"__proto__": {"x": 1}}') as Msg] },
      field: 'payload.barcodes[0].__proto__',
      rule: /is not allowed/,
    },
  ];

  for (const c of cases) {
    it(`${c.field}: refused naming it, nothing sent, no run at the instrument`, async function () {
      const loaded = await load({});
      await loaded.expectFailure(
        { protocolId: 1, payload: c.payload },
        c.field,
        new RegExp(`^${c.field.replace(/[[\]]/g, '\\$&')} ${c.rule.source}`),
      );
      assert.deepEqual(
        sim.requests.map((r) => `${r.method} ${r.path}`),
        [],
        'requests were made',
      );
    });
  }

  it('good load-complete fields are sent with the start', async function () {
    const loaded = await load({});
    const out = await loaded.run({ protocolId: 1, payload: { residualTips: [], barcodes: [], liquidVolumes: [] } });
    assert.equal(out.outcome, 'started');
    assert.ok(sim.requests.some((r) => r.path === '/api/v1/protocol-run/load-complete'));
  });
});
