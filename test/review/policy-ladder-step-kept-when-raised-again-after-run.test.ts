/**
 * review63: an error raised again after its run ended (or past the clock hour) while still pending: lh-error-poll
 * raises an error again after a Node-RED restart or a failover that lost its memory of seen errors. The ladder
 * counts restarted with the new scope and forgot the errors already decided, so the error took the FIRST step of the
 * new scope: an error the ladder had sent to a person (its manual 2nd step) was answered by the walk-away 1st step, and
 * it took the new scope's 1st step from the next new error. README: "The same error raised again keeps its step."
 * Now a new scope restarts the counts of new errors only; an error decided before keeps its step.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: a ladder step kept by an error raised again after its run ended', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('the error the ladder sent to a person stays with a person; the next new error starts at step 1', async function () {
    const server = serverFlow(sim, { withB: false });
    const ladder = {
      id: 'clot',
      source: 'A',
      pattern: 'Clot',
      steps: [{ mode: 'walk-away', answer: 'Retry' }, { mode: 'manual' }],
    };
    await loadFlow(
      [
        ...server.nodes,
        { id: 'policy', type: 'lh-error-policy', server: 'server', rules: [ladder], wires: [['notify'], ['auto'], ['escalate']] },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
      ],
      server.credentials,
    );
    const auto = collect(helper.getNode('auto'));
    const escalate = collect(helper.getNode('escalate'));
    const policy = helper.getNode('policy');
    const instrument = { name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: '' };
    const raise = (record: Msg): void =>
      policy.receive({ payload: structuredClone(record), source: 'A', event: 'raised', errorId: record.id, instrument });
    const clot = (): Msg =>
      sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    const retried = (): unknown[] => answersSent(sim).map((b) => b.id);

    const startTime = new Date().toISOString();
    policy.receive({
      topic: 'state',
      state: 'Running',
      payload: { protocolRunState: 'Running', protocolId: 'p', startTime },
      instrument,
    });
    const first = clot();
    raise(first); // step 1: retried at once
    await until(() => auto.length === 1, 'the first error retried');
    const second = clot();
    raise(second); // step 2: a person must answer
    await until(() => escalate.length === 1, 'the second error escalated');
    assert.deepEqual(retried(), [first.id]);

    // the run ends on the instrument; the second error is still pending, and error poll raises it again
    policy.receive({ topic: 'state', state: 'Idle', payload: { protocolRunState: 'Idle' }, instrument });
    raise(second);
    await until(() => escalate.length === 2, 'the second error escalated again (it keeps its step)');
    assert.equal(escalate[1].outcome, 'escalated');
    assert.equal((escalate[1].policy as Msg).step, 2);
    assert.deepEqual(retried(), [first.id], 'the error sent to a person is not answered by step 1');

    // the first new error of the hour gets step 1
    const third = clot();
    raise(third);
    await until(() => auto.length === 2, 'the third error retried');
    assert.deepEqual(retried(), [first.id, third.id]);
    assert.equal(escalate.length, 2);
  });
});
