/**
 * Review finding (review46, lh-run Simulate): "a msg.simulate that the dialog's yes or no contradicts is refused,
 * nothing sent". A start with msg.confirmLoading took the mode of the run waiting at Loading and ignored what this
 * node and msg asked: an lh-run node set to *Simulate: yes* (a dry-run button), or a msg with `simulate: true`,
 * confirmed a real run another start of this Node-RED had left at Loading, and load-complete started it — hardware
 * moved for a node or msg that asked for a simulation. Now a confirm whose asked mode (the dialog's yes or no, else
 * msg.simulate when given) is not the waiting run's is refused before anything is sent (field `simulate`); a confirm
 * that asks no mode continues the run in its own, as before.
 */
import assert from 'node:assert/strict';

import { builtNode, useInstrument } from '../support/node-suite';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: confirming a run at Loading in another mode than the one asked is refused', function () {
  this.timeout(30000);
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 } });

  async function load(): Promise<{ out: Msg[]; caught: Msg[] }> {
    const server = serverFlow(sim, { withB: false });
    const run = (id: string, simulate: string): Msg => ({
      id,
      type: 'lh-run',
      server: 'server',
      operation: 'start',
      protocolId: '1',
      simulate,
      stopAtLoading: true,
      pollInterval: '0.05',
      timeout: '5',
      wires: [['out']],
    });
    await helper.load(
      [tlsConfigNode, builtNode('lh-server'), builtNode('lh-run')],
      [
        ...server.nodes,
        run('real', 'false'),
        run('dry', 'true'),
        run('asked', 'msg'),
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['real', 'dry', 'asked'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    return { out: collect(helper.getNode('out')), caught: collect(helper.getNode('caught')) };
  }

  const loadCompletes = (): Msg[] =>
    sim.requests.filter((r) => r.path === '/api/v1/protocol-run/load-complete').map((r) => r.body as Msg);

  it('a real run left at Loading is not confirmed by a Simulate: yes node nor by msg.simulate true', async function () {
    const { out, caught } = await load();
    helper.getNode('real').receive({});
    await until(() => out.length === 1, 'the real run left at Loading', 10000);
    assert.equal(out[0].outcome, 'loading');
    assert.equal((out[0].runStatus as Msg).isSimulation, false);

    helper.getNode('dry').receive({ confirmLoading: true });
    await until(() => caught.length === 1, 'the dry-run node refused', 10000);
    assert.equal((caught[0]._error as Msg).field, 'simulate');
    assert.match(String((caught[0]._error as Msg).message), /real run|not a simulation|simulat/);

    helper.getNode('asked').receive({ confirmLoading: true, simulate: true });
    await until(() => caught.length === 2, 'msg.simulate true refused', 10000);
    assert.equal((caught[1]._error as Msg).field, 'simulate');
    assert.deepEqual(loadCompletes(), [], 'nothing was sent: no load-complete');
    assert.equal(sim.runs.state, 'Loading');

    // the node that asked for a real run (or a msg that asks no mode) confirms it
    helper.getNode('asked').receive({ confirmLoading: true });
    await until(() => out.length === 2, 'confirmed', 10000);
    assert.equal(out[1].outcome, 'started');
    assert.equal(loadCompletes().length, 1);
    assert.equal(loadCompletes()[0].simulate, false);
  });

  it('a simulated run left at Loading is not confirmed by a Simulate: no node; the dry-run node confirms it', async function () {
    const { out, caught } = await load();
    helper.getNode('dry').receive({});
    await until(() => out.length === 1, 'the simulated run left at Loading', 10000);
    helper.getNode('real').receive({ confirmLoading: true });
    await until(() => caught.length === 1, 'the real-run node refused', 10000);
    assert.equal((caught[0]._error as Msg).field, 'simulate');
    assert.deepEqual(loadCompletes(), []);
    helper.getNode('dry').receive({ confirmLoading: true });
    await until(() => out.length === 2, 'confirmed', 10000);
    assert.equal(out[1].outcome, 'started');
    assert.equal(loadCompletes()[0].simulate, true);
  });
});
