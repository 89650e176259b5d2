/**
 * Review (runs and live events). lh-run-watch alone (no lh-coordination): a redeploy while the poll that saw the run
 * end reads its run record lost the finished msg. The poll had already written "Idle, run reported finished" into
 * the memory the node keeps across redeploys (observe() works on it in place) before the record read; the closed
 * node then sent nothing, and the new node found the run reported: no Idle on output 1, no msg on output 2, ever.
 * README: "Output 2: once per finished run ... Nothing is reported twice across redeploys" — once, not never.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { recordRunWatch, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const BUSY_MS = 20000;

describe('lh-run-watch: a redeploy while the finished run record is read', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 20 } });
  afterEach(function () {
    sim.clearFaults();
    restartMemory();
  });

  const received: Record<string, Msg[]> = {};
  const record = (): void => recordRunWatch(received);
  const recordReads = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/run-data').length;

  it('reports the finished run once, with its result, from the redeployed node', async function () {
    this.timeout(60000);
    const quick = sim.addProtocol('Quick');
    // one step of 40 simulated seconds: 2 s at speed 20, so a poll every 0.5 s sees it running
    sim.state.protocols
      .get(quick)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 40 });
    const f = runWatchFlow(sim, { interval: '0.5', progressInterval: '0', listen: false });
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    record();
    await until(() => received.states.length === 1, 'the first state', BUSY_MS);

    sim.runs.create({ protocolId: quick, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading', BUSY_MS);
    sim.runs.loadComplete({ protocolId: quick });
    await until(() => received.states.some((m) => m.state === 'Running'), 'Running reported', BUSY_MS);
    // the records listed when the run was first seen (none is its record): read once, after that first sight
    await until(() => recordReads() === 1, 'the records listed at first sight', BUSY_MS);
    assert.equal(received.finished.length, 0);

    // the next run-data read is the one of the poll that saw the run end: hold its answer 3 s
    let held = false;
    const readsBefore = recordReads();
    const off = sim.onRequest((entry) => {
      if (held || entry.method !== 'GET' || entry.path !== '/api/v1/run-data') return;
      held = true;
      sim.setFaults({ latencyMs: 3000 }); // read right after this listener: it applies to this request only
    });
    try {
      await until(() => held, 'the run record read of the finished run', BUSY_MS);
    } finally {
      off();
    }
    sim.clearFaults();
    assert.equal(recordReads(), readsBefore + 1);
    assert.equal(sim.runs.state, 'Idle');

    // the user deploys (a full deploy) while that read is under way
    await helper.setFlows(f.nodes, 'full', f.credentials);
    record();
    const watch = helper.getNode('watch');
    const polls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;
    // several polls of the new node after the held read was answered (3 s)
    await new Promise((r) => setTimeout(r, 3200));
    for (let i = 0; i < 3; i++) {
      const served = polls();
      watch.receive({});
      await until(() => polls() > served, 'a poll of the redeployed node', BUSY_MS);
    }
    await until(() => received.finished.length > 0, 'the finished run reported', 3000).catch(() => undefined);

    assert.equal(received.finished.length, 1, 'the finished run is reported exactly once');
    const [done] = received.finished;
    assert.equal(done.result, 'completed');
    assert.equal(done.protocolId, quick);
    assert.equal(done.runId, sim.runs.records.all[0].id);
    const states = received.states.map((m) => m.state);
    assert.equal(states[states.length - 1], 'Idle', `states reported: ${states.join(', ')}`);
    assert.equal(states.filter((s) => s === 'Idle').length, 2, `states reported: ${states.join(', ')}`);
  });
});
