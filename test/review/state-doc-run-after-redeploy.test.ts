/**
 * Review finding (review34, the lab's live picture): the state document's `run` came only from a run watch poll that
 * saw the run state change. The run watch remembers what it reported across a redeploy (so it never reports a state
 * twice), so after a redeploy, full or of the state node alone, its polls saw no change and told the lab nothing: the
 * new state node's document said `run: {state: null}` (and the fleet tab no run) while the instrument was loading or
 * running a protocol, until the run's next state change, which for a paused or loading run may be hours away. The
 * run watch now tells the lab the run state it reads at every poll (a state document folds repeats: no extra msgs).
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type Doc = { run: { state: string | null; protocol: string | null } };

describe('review: the run in the state document after a redeploy', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { simulationSpeed: 20 }, afterEach: () => restartMemory() });

  const runPolls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;

  function flow(stateRate: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false });
    return {
      nodes: [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'runs', type: 'lh-run-watch', server: 'server', interval: '0.3', progressInterval: '0', wires: [[], [], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', rate: stateRate, machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      credentials: server.credentials,
    };
  }

  /** The state documents sent since the last (re)deploy (the helper node is replaced by a full deploy). */
  let docs: Doc[] = [];
  function record(): void {
    docs = [];
    helper.getNode('doc').on('input', (msg: Msg) => docs.push(msg.payload as Doc));
  }

  for (const deploy of ['full', 'nodes'] as const) {
    it(`says the run the instrument is in after a ${deploy === 'full' ? 'full redeploy' : 'redeploy of the state node alone'}`, async function () {
      const protocolId = sim.addProtocol('Held at loading');
      sim.state.protocols.get(protocolId)!.steps.push({
        stepType: 'PauseStep',
        id: 900,
        name: 'Wait',
        stepOrder: 1,
        disabled: false,
        duration: 4,
      });
      const first = flow('20');
      await helper.load([tlsConfigNode, ...packageNodes()], first.nodes, first.credentials);
      record();
      sim.runs.create({ protocolId, simulate: true }, 'admin');
      await until(() => sim.runs.state === 'Loading', 'the run loading', 20_000);
      await until(() => docs.at(-1)?.run.state === 'Loading', 'a document of the loading run', 20_000);
      assert.equal(docs.at(-1)?.run.protocol, 'Held at loading');

      // redeployed (the state node's rate changed): the run still loads on the instrument
      const second = flow('10');
      await helper.setFlows(second.nodes as never, deploy, second.credentials as never);
      record();
      await until(() => docs.length > 0, 'a document after the redeploy', 20_000);
      const polls = runPolls();
      await until(() => runPolls() >= polls + 3, 'three run polls after the first document', 20_000);
      await until(() => docs.at(-1)?.run.state === 'Loading', 'the loading run in the document', 5_000).catch(() => {
        assert.fail(
          `after the redeploy the document says run ${JSON.stringify(docs.at(-1)?.run)} while the instrument is Loading`,
        );
      });
      assert.equal(sim.runs.state, 'Loading');
      assert.equal(docs.at(-1)?.run.protocol, 'Held at loading');
    });
  }
});
