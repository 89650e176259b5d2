/**
 * Issue 17, point 2 (last item): a firmware error (on `instincterrors` only, never in the error list) answered by a
 * flow through lh-answer-error is reported resolved afterwards — also when the instrument does not push the
 * resolution — and is not answered a second time by this Node-RED. Real Node-RED runtime, simulator.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow, loadFlowWithChange, pollsDone, setProperty, socketOpen } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
const ANSWER_PATH = '/api/v1/errors/runtime';

describe('firmware errors answered from a flow', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  async function load(): Promise<{ raised: Msg[]; resolved: Msg[]; answered: Msg[]; caught: Msg[] }> {
    const server = bServerFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          wires: [['raised', 'choose'], ['resolved'], []],
        },
        { id: 'raised', type: 'helper' },
        setProperty('choose', 'selectedResponse', 'Abort', ['answer']),
        { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['answered']] },
        { id: 'answered', type: 'helper' },
        { id: 'resolved', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['answer'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    return {
      raised: collect(helper.getNode('raised')),
      resolved: collect(helper.getNode('resolved')),
      answered: collect(helper.getNode('answered')),
      caught: collect(helper.getNode('caught')),
    };
  }

  it('is reported resolved once after the flow answered it, though the instrument pushes no resolution', async function () {
    sim.firmwareAnswerPushesResolution = false;
    const { raised, resolved, answered } = await load();
    await until(() => socketOpen(sim), 'the errors socket open on both ends', 10000);
    const fw = sim.raiseFirmwareError({ title: 'Tip pickup failed', responses: ['Retry', 'Abort'] });
    await until(() => answered.length === 1, 'the answer from the flow', 10000);
    assert.equal(raised.length, 1);
    assert.equal(answered[0].outcome, 'answered');
    await until(() => resolved.length === 1, 'the resolution (this Node-RED answered it)');
    assert.equal(resolved[0].errorId, fw.id);
    await pollsDone(sim, 2); // two more polls: resolved once
    assert.equal(resolved.length, 1);
    assert.equal(raised.length, 1);
  });

  it('is not answered twice: a second answer from a flow is refused by the ledger, nothing sent again', async function () {
    sim.firmwareAnswerPushesResolution = false;
    const { raised, answered, caught, resolved } = await load();
    await until(() => socketOpen(sim), 'the errors socket open on both ends', 10000);
    sim.raiseFirmwareError({ title: 'Tip pickup failed', responses: ['Retry', 'Abort'] });
    await until(() => answered.length === 1, 'the first answer', 10000);
    await until(() => resolved.length === 1, 'resolved');
    await pollsDone(sim, 2); // polls that list errors (the firmware error is never listed)
    sim.clearRequests();
    helper.getNode('choose').receive({ ...raised[0] }); // the raised msg once more, as a second branch would send it
    await until(() => caught.length === 1, 'the second answer refused');
    assert.equal((caught[0]._error as Msg).kind, 'already-answered');
    assert.equal(sim.requests.filter((r) => r.path === ANSWER_PATH).length, 0, 'no second answer sent');
    assert.equal(answered.length, 1);
  });
});
