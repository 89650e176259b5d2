/**
 * Review finding (review66): lh-settings' merge and lh-service-routine's update read, merge and write. Two msgs at
 * once (two flows, a button pressed twice, a "mark as run now" beside a rename) both read before either wrote, and
 * the second wrote the first's change back: a set or update reported saved (status, output) was undone by the node
 * itself, and the audit record of the second showed an old value that was not the old one. Now the sets of one
 * instrument's settings, and the updates of one routine, go one at a time in this Node-RED, whichever lh-server node
 * of the instrument they go through.
 *
 * Property (seeded PRNG, the seed printed; LH_SEED=<n> replays it, LH_CASES=<n> draws more): a burst of 2 to 5 msgs,
 * each changing one drawn setting (or routine field) to a drawn value, sent at once to one or two nodes: the
 * instrument ends with every msg's change (the last for a field changed twice), and each output shows its own.
 */
import assert from 'node:assert/strict';

import { builtNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

const AT = { z: 'tab', x: 100, y: 100 };

describe('review: settings and routine merges sent at once lose no change', function () {
  const sim = useInstrument();

  /** Two nodes of `type` with `config`, each on its own lh-server node of the one instrument (its URL spelled twice). */
  async function loadTwo(type: string, config: Msg): Promise<{ nodes: ReturnType<typeof helper.getNode>[]; outs: Msg[][] }> {
    const one = serverFlow(sim, { withB: false, id: 's1' });
    const two = serverFlow(sim, { withB: false, id: 's2', config: { baseUrl: `${sim.baseUrl}/` } });
    const flow: Msg[] = [{ id: 'tab', type: 'tab', label: 'merges' }, ...one.nodes, ...two.nodes];
    for (const [i, server] of ['s1', 's2'].entries()) {
      flow.push({ ...config, id: `n${i}`, type, server, ...AT, wires: [[`out${i}`]] }, { id: `out${i}`, type: 'helper', ...AT });
    }
    await helper.load([tlsConfigNode, builtNode('lh-server'), builtNode(type)], flow, { ...one.credentials, ...two.credentials });
    const nodes = [helper.getNode('n0'), helper.getNode('n1')];
    const outs = [collect(helper.getNode('out0')), collect(helper.getNode('out1'))];
    // each logged in first (a login in between would space the msgs of a burst out)
    for (const [i, node] of nodes.entries()) {
      node.receive(
        type === 'lh-settings' ? { payload: { hideKeyboard: false } } : { routineId: 4, payload: { isRecommended: false } },
      );
      await until(() => outs[i].length === 1, 'the first output');
    }
    return { nodes, outs };
  }

  it(`software settings: every set of a burst is applied (seed ${SEED})`, async function () {
    console.log(`      merges seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    const { nodes, outs } = await loadTwo('lh-settings', { operation: 'set-software-settings', mode: 'merge' });
    for (let c = 0; c < CASES; c++) {
      const expected = { ...sim.state.softwareSettings } as Msg;
      const sent: Msg[] = [];
      for (let i = rng.int(2, 5); i > 0; i--) {
        const change: Msg = rng.chance(0.5)
          ? { [rng.pick(['hideKeyboard', 'generateRunReport', 'allowRedWarningOverride'])]: rng.chance(0.5) }
          : { defaultAmbientTemperature: rng.int(4, 40) };
        Object.assign(expected, change);
        sent.push(change);
      }
      const before = outs[0].length + outs[1].length;
      for (const change of sent) rng.pick(nodes).receive({ payload: change });
      await until(() => outs[0].length + outs[1].length === before + sent.length, 'an output for each msg');
      assert.deepEqual(sim.state.softwareSettings, expected, `seed ${SEED} case ${c}: ${JSON.stringify(sent)}`);
    }
  });

  it(`service routines: every update of a burst is applied (seed ${SEED})`, async function () {
    const rng = new Rng(SEED ^ 0x5eed);
    const { nodes, outs } = await loadTwo('lh-service-routine', { operation: 'update' });
    for (let c = 0; c < CASES; c++) {
      const id = rng.int(1, 4);
      const expected = { ...sim.state.serviceRoutines.find((r) => r.id === id) } as Msg;
      const sent: Msg[] = [];
      for (let i = rng.int(2, 5); i > 0; i--) {
        const change: Msg = rng.chance(0.5) ? { isRecommended: rng.chance(0.5) } : { name: `Routine ${rng.int(0, 999)}` };
        Object.assign(expected, change);
        sent.push(change);
      }
      const before = outs[0].length + outs[1].length;
      for (const change of sent) rng.pick(nodes).receive({ routineId: id, payload: change });
      await until(() => outs[0].length + outs[1].length === before + sent.length, 'an output for each msg');
      const now = sim.state.serviceRoutines.find((r) => r.id === id);
      assert.deepEqual(now, expected, `seed ${SEED} case ${c}: routine ${id}: ${JSON.stringify(sent)}`);
    }
  });

  it('each output shows its own change, read back after it', async function () {
    const { nodes, outs } = await loadTwo('lh-settings', { operation: 'set-software-settings', mode: 'merge' });
    nodes[0].receive({ payload: { hideKeyboard: true } });
    nodes[1].receive({ payload: { generateRunReport: false } });
    await until(() => outs[0].length + outs[1].length === 4, 'two outputs');
    assert.equal((outs[0][1].payload as Msg).hideKeyboard, true);
    assert.equal((outs[1][1].payload as Msg).generateRunReport, false);
    assert.equal((outs[1][1].payload as Msg).hideKeyboard, true, 'the second read back after the first');
  });
});
