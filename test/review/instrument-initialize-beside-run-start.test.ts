/**
 * lh-instrument's initialise is refused while a run is in progress: it read the run state and sent initialise if it
 * was Idle. A run start of lh-run under way in the same Node-RED (validate, create, load: several requests before the
 * run is in progress at the instrument) read Idle too, so the instrument was homed while a start went on, and a start
 * sent while initialise homed (up to 180 s) was not refused either. Initialise now holds the instrument's start slot
 * (the one that keeps two starts apart) from its read of the run state to its answer.
 */
import assert from 'node:assert/strict';

import { builtNode, useInstrument } from '../support/node-suite';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-instrument: initialise beside a run start of this Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 } });

  async function load(): Promise<void> {
    const server = serverFlow(sim, { withB: false, timeout: 10000 });
    await helper.load(
      [tlsConfigNode, ...['lh-server', 'lh-run', 'lh-instrument'].map(builtNode)],
      [
        ...server.nodes,
        {
          id: 'run',
          type: 'lh-run',
          server: 'server',
          operation: 'start',
          protocolId: '1',
          simulate: 'true',
          pollInterval: '0.05',
          timeout: '20',
          wires: [['ran']],
        },
        { id: 'inst', type: 'lh-instrument', server: 'server', operation: 'initialize', wires: [['done']] },
        { id: 'ran', type: 'helper' },
        { id: 'done', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['run', 'inst'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  }
  const sent = (path: string): boolean => sim.requests.some((r) => r.method === 'POST' && r.path === path);
  const errorOf = (m: Msg): Msg => m._error as Msg;

  it('a run start under way: initialise is refused at once, naming why, nothing sent', async function () {
    await load();
    const caught = collect(helper.getNode('caught'));
    const done = collect(helper.getNode('done'));
    sim.setFaults({ latencyMs: 500 });
    const before = sim.requests.length;
    helper.getNode('run').receive({});
    await until(() => sim.requests.length > before, 'the start under way', 10000);
    helper.getNode('inst').receive({});
    await until(
      () =>
        caught.some((m) => errorOf(m).operation === 'initialize') || done.length > 0 || sent('/api/v1/instruments/initialize'),
      'initialise answered',
      20000,
    );
    sim.clearFaults();
    assert.equal(sent('/api/v1/instruments/initialize'), false, 'no initialise while a start is under way');
    const refusal = errorOf(caught.find((m) => errorOf(m).operation === 'initialize') as Msg);
    assert.equal(refusal.field, 'operation');
    assert.match(String(refusal.message), /run start on this instrument is under way/);
    assert.equal(done.length, 0);
  });

  it('initialise under way: a run start is refused, nothing of it sent', async function () {
    await load();
    const caught = collect(helper.getNode('caught'));
    sim.setFaults({ latencyMs: 1500 });
    helper.getNode('inst').receive({});
    await until(
      () => sim.requests.some((r) => r.path === '/api/v1/protocol-run/status' || r.path.includes('run')),
      'initialise under way',
      10000,
    ).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    helper.getNode('run').receive({});
    await until(() => caught.some((m) => errorOf(m).operation === 'start-run'), 'the start refused', 20000);
    sim.clearFaults();
    assert.equal(sent('/api/v1/protocol-run/create'), false);
    assert.match(String(errorOf(caught.find((m) => errorOf(m).operation === 'start-run') as Msg).message), /initialize/);
  });
});
