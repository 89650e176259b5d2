// Runs driven by flows: an error raised during a run, watched by lh-error-poll and answered by lh-answer-error
// (through a core change node, no function node), resumes the run, which then finishes; states served as names.
import assert from 'node:assert/strict';
import path from 'path';

import { restartMemory } from '../support/homes';
import { builtNode, useInstrument } from '../support/node-suite';
import { helper, runtimeModule, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type NodeModule = (RED: unknown) => void;

const changeNode = runtimeModule<NodeModule>(path.join('@node-red/nodes', 'core', 'function', '15-change.js'));
// the module instances the runtime loaded (built), to forget what earlier tests reported

describe('lh-run in flows', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 200, runStatesAsNames: true } });
  afterEach(function () {
    restartMemory();
  });

  it('a run whose injected error is answered Retry from a flow (lh-answer-error) resumes and finishes completed', async function () {
    const server = serverFlow(sim, { withB: false });
    const flow: Msg[] = [
      { id: 'tab', type: 'tab', label: 'run' },
      ...server.nodes,
      {
        id: 'run',
        type: 'lh-run',
        z: 'tab',
        server: 'server',
        operation: 'start',
        protocolId: '1',
        pollInterval: '0.05',
        wires: [['started']],
      },
      { id: 'started', type: 'helper', z: 'tab' },
      { id: 'poll', type: 'lh-error-poll', z: 'tab', server: 'server', source: 'A', interval: '0.5', wires: [['retry'], [], []] },
      {
        id: 'retry',
        type: 'change',
        z: 'tab',
        rules: [{ t: 'set', p: 'selectedResponse', pt: 'msg', to: 'Retry', tot: 'str' }],
        wires: [['answer']],
      },
      { id: 'answer', type: 'lh-answer-error', z: 'tab', server: 'server', wires: [['answered']] },
      { id: 'answered', type: 'helper', z: 'tab' },
      {
        id: 'watch',
        type: 'lh-run-watch',
        z: 'tab',
        server: 'server',
        interval: '0.5',
        wires: [['states'], ['finished'], [], []],
      },
      { id: 'states', type: 'helper', z: 'tab' },
      { id: 'finished', type: 'helper', z: 'tab' },
    ];
    await helper.load(
      [tlsConfigNode, changeNode, ...['lh-server', 'lh-run', 'lh-error-poll', 'lh-answer-error', 'lh-run-watch'].map(builtNode)],
      flow,
      server.credentials,
    );
    const finished: Msg[] = [];
    helper.getNode('finished').on('input', (m: Msg) => finished.push(m));
    const answered: Msg[] = [];
    helper.getNode('answered').on('input', (m: Msg) => answered.push(m));

    const started = new Promise<Msg>((resolve) => helper.getNode('started').once('input', resolve));
    helper.getNode('run').receive({});
    const start = await started;
    assert.equal(start.state, 'Running'); // served as a name by this simulator
    sim.injectRunError({ title: 'Clot detected' });
    assert.equal(sim.runs.state, 'ErrorHandling');

    await until(() => answered.length === 1, 'the answer from the flow');
    assert.equal((answered[0].payload as Msg).selectedResponse, 'Retry');
    await until(() => finished.length === 1, 'the finished run', 10_000);
    assert.equal(finished[0].result, 'completed');
    const [record] = sim.runs.records.all;
    assert.equal(record.runResult, 'Completed');
    assert.deepEqual(
      record.errors.map((e) => [e.title, e.selectedResponse]),
      [['Clot detected', 'Retry']],
    );
    assert.equal(finished[0].runId, record.id);
  });
});
