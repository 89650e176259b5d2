/**
 * Issue 17, point 2, in a real Node-RED runtime against the simulator: lh-run reports `started` only for a run the
 * instrument showed running; two starts at once on one instrument send one create (the second is refused, kind
 * busy, before anything is sent); lh-run-watch reports a run record's unknown words as `unknown` with the text.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { builtNode } from '../support/node-suite';
import { RUN_WATCH_OUTPUTS, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { collect, helper, nextMessage, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';
import { useRunNode } from './lh-run.support';

type Msg = Record<string, unknown>;

describe('lh-run and lh-run-watch report only what the instrument did', function () {
  const { sim, load } = useRunNode();
  afterEach(function () {
    restartMemory();
  });
  const sent = (path: string): number => sim.requests.filter((r) => r.path === `/api/v1/protocol-run/${path}`).length;

  it('fails a start whose run went Scheduling → Aborting → Idle (it was reported started)', async function () {
    sim.runs.setSpeed(4); // Scheduling 0.5 s, Aborting 0.75 s: the node's 50 ms polls see both
    sim.runs.endNext({ at: 'scheduling' });
    const node = await load({ operation: 'start', protocolId: '1' });
    const failed = await node.runFailing({});
    const details = failed._error as Msg;
    assert.equal(details.kind, 'instrument');
    assert.match(
      String(details.message),
      /the run did not start: the run was aborted before it reached Loading \(Scheduling → Aborting\)/,
    );
    assert.equal(sent('load-complete'), 0);
  });

  it('fails a start aborted at the deck check after load-complete (it was reported started)', async function () {
    sim.runs.setSpeed(4);
    sim.runs.endNext({ at: 'deck-check', result: 'Aborted' });
    const node = await load({ operation: 'start', protocolId: '1' });
    const failed = await node.runFailing({});
    assert.match(
      String((failed._error as Msg).message),
      /the run was aborted after load-complete before it was seen running \(Scheduling → Scheduled → Loading → Aborting\)/,
    );
    assert.equal(sent('load-complete'), 1);
  });

  it('two start msgs at once on one node send one create; the second is refused (busy) before anything is sent', async function () {
    sim.runs.setSpeed(100);
    const node = await load({ operation: 'start', protocolId: '1' });
    const outputs = collect(node.out);
    const caught = nextMessage(node.caught);
    node.node.receive({ topic: 'first' });
    node.node.receive({ topic: 'second' });
    const refused = await caught;
    const details = refused._error as Msg;
    assert.equal(refused.topic, 'second');
    assert.equal(details.kind, 'busy');
    assert.match(
      String(details.message),
      /^start refused: another start on this instrument is in progress \(protocol 1, for \d+ s\); nothing was sent/,
    );
    await until(() => outputs.length === 1, 'the first start');
    assert.equal(outputs[0].outcome, 'started');
    assert.equal(sent('create'), 1, 'one create');
    assert.equal(sim.requests.filter((r) => r.status === 409).length, 0, 'no 409 from the instrument');
  });

  it('two lh-server nodes of one instrument share the claim: two lh-run nodes started together send one create', async function () {
    sim.runs.setSpeed(100);
    const one = serverFlow(sim, { id: 's1', withB: false });
    const two = serverFlow(sim, { id: 's2', withB: false });
    const flow: Msg[] = [
      ...one.nodes,
      ...two.nodes,
      ...['1', '2'].map((n) => ({
        id: `run${n}`,
        type: 'lh-run',
        server: `s${n}`,
        operation: 'start',
        protocolId: '1',
        pollInterval: '0.05',
        timeout: '5',
        wires: [['out']],
      })),
      { id: 'out', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['run1', 'run2'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ];
    await helper.load([tlsConfigNode, builtNode('lh-server'), builtNode('lh-run')], flow, {
      ...one.credentials,
      ...two.credentials,
    });
    const outputs = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    helper.getNode('run1').receive({});
    helper.getNode('run2').receive({});
    await until(() => outputs.length + caught.length === 2, 'both starts answered');
    assert.equal(outputs.length, 1);
    assert.equal((caught[0]._error as Msg).kind, 'busy');
    assert.equal(sent('create'), 1);
  });

  describe('lh-run-watch', function () {
    for (const word of ['Incomplete', 'Not completed', 'NotSuccessful']) {
      it(`reports a run whose record says ${JSON.stringify(word)} as unknown with the instrument's words (was: completed)`, async function () {
        sim.runs.setSpeed(1000);
        const f = runWatchFlow(sim, { interval: '0.5', progressInterval: '0' });
        await helper.load(runWatchModules(), f.nodes, f.credentials);
        const finished: Msg[] = [];
        helper.getNode(RUN_WATCH_OUTPUTS[1]).on('input', (m: Msg) => finished.push(m));
        sim.runs.endNext({ at: 'end', result: word });
        sim.runs.create({ protocolId: 1 }, 'admin');
        await until(() => sim.runs.state === 'Loading', 'Loading');
        const polled = sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;
        helper.getNode('watch').receive({}); // the watch sees the run: waited for, not a fixed sleep
        await until(
          () => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length > polled,
          'the poll that sees Loading',
        );
        sim.runs.loadComplete({ protocolId: 1 });
        await until(() => sim.runs.state === 'Idle', 'the end of the run');
        helper.getNode('watch').receive({});
        await until(() => finished.length === 1, 'the finished run');
        assert.equal(finished[0].result, 'unknown');
        assert.equal(finished[0].resultText, word);
        assert.equal((finished[0].payload as Msg).resultText, word);
        assert.equal(finished[0].runId, sim.runs.records.all[0].id);
      });
    }
  });
});
