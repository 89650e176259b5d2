/**
 * Real-instrument fidelity, client side: request shapes that public client code tested on a real instrument
 * sends (see spec/observed-instrument.md).
 */
import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import { useClients } from '../support/client-suite';
import { loadNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('real-instrument fidelity (client)', function () {
  describe('answering an error without errorData items', function () {
    const sim = useInstrument();

    it('sends errorData: [{id: <error id>, selectedResponse}], never an empty list, and the answer is applied', async function () {
      const injected = sim.injectPendingError();
      const answer = await loadNode(sim, { id: 'answer', type: 'lh-answer-error' });
      const out = await answer.run({ payload: injected, selectedResponse: 'Ignore' });
      assert.equal(out.outcome, 'answered');
      const sent = sim.requests.filter((r) => r.path === '/api/v1/errors/runtime').map((r) => r.body as Msg);
      assert.equal(sent.length, 1);
      assert.deepEqual(sent[0].errorData, [{ id: injected.id, selectedResponse: 'Ignore' }]);
      assert.equal(sim.state.history.find((r) => r.id === injected.id)?.selectedResponse, 'Ignore');
    });
  });

  describe('step types', function () {
    const suite = useClients();

    it('accepts a step type with or without the Step suffix and sends it as given', async function () {
      const c = suite.make();
      for (const stepType of ['TransferSamples', 'TransferSamplesStep', 'Pause']) {
        await c.prep.createStep(1, { stepType, name: `s-${stepType}` }).catch(() => undefined); // the simulator decides
      }
      const sent = suite.sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/protocols/1/step');
      assert.deepEqual(
        sent.map((r) => (r.body as Msg).stepType),
        ['TransferSamples', 'TransferSamplesStep', 'Pause'],
      );
    });

    it('still refuses a step type that is neither', async function () {
      const c = suite.make();
      for (const stepType of ['Step', 'Nonsense', 'transfersamples']) {
        await assert.rejects(
          c.prep.createStep(1, { stepType, name: 'x' }),
          (err: LhError) => err.kind === 'validation' && err.field === 'payload.stepType',
        );
      }
      assert.equal(suite.sim.requests.length, 0);
    });
  });
});
