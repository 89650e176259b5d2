/**
 * Review finding: lh-steps rename, enable, disable, update (answered without a body) and reorder read the step(s) back
 * after the write; when that read failed (the instrument answering 503 just then), the msg reached Catch with the
 * read's error alone ("get-step failed: 503"), as if the write had failed too. Now the error says the write was made
 * and only reading back failed (the write's own operation, the read's cause), so a flow does not take a rename that
 * was made for one that was not.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-steps write made, its read back failed', function () {
  const sim = useInstrument();
  const { runFailing } = configuredNode(sim, { id: 'steps', type: 'lh-steps' }, { only: ['lh-server', 'lh-steps'] });

  for (const [operation, payload, check] of [
    ['rename', 'Add wash buffer', (): boolean => sim.state.protocols.get(1)?.steps[1].name === 'Add wash buffer'],
    ['disable', undefined, (): boolean => sim.state.protocols.get(1)?.steps[1].disabled === true],
    ['reorder', [3, 1, 2], (): boolean => sim.state.protocols.get(1)?.steps[0].id === 3],
  ] as const) {
    it(`${operation}: the error says the write was made and reading back failed`, async function () {
      const stop = sim.onRequest((r) => {
        if (r.method === 'PUT') sim.setFaults({ statusRate: 1, statusCode: 503, methods: ['GET'] });
      });
      const err = await runFailing({ operation, protocolId: '1', stepId: '2' }, { payload });
      stop();
      sim.clearFaults();
      assert.ok(check(), 'the instrument made the write');
      assert.match(String(err.message), new RegExp(`^${operation}-steps?: the .* was made, but reading .* back failed: .*503`));
      assert.equal((err as Msg).operation, operation === 'reorder' ? 'reorder-steps' : `${operation}-step`);
    });
  }
});
