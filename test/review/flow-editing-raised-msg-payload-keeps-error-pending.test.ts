/**
 * Review finding (review64): lh-error-poll's raised msg carried, as msg.payload, the very record object its memory of
 * seen errors holds. A change or function node on its first wire that edits msg.payload in place (a lab prefixing
 * the title, "set msg.payload.title", a translation) edited the memory: at the next poll the instrument's record of
 * the still pending error no longer matched it, so the node took it for another error under the same id (a reused
 * id): it reported the pending error RESOLVED (output 2, with the edited title) and raised it a second time. A pushed
 * firmware error's record (held open for the answer page and for its resolution frame) was edited the same way.
 *
 * Now each msg carries a copy of the record (and of msg.instrument): what a flow does with its msg never reaches
 * what the node remembers. Property over the ways a flow may edit the payload (seeded; LH_SEED replays): the error
 * is raised once and never reported resolved while the instrument still lists it.
 */
import assert from 'node:assert/strict';

import { bServerFlow, loadFlowWithChange, pollNode, pollsDone, setProperty, socketOpen } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;

/** Edits a flow may make to msg.payload in place (a change node's "set"): the property and the value. */
const EDITS: [string, unknown][] = [
  ['payload.title', 'Lab 3: Tip lost'],
  ['payload.timeStamp', '2000-01-01T00:00:00Z'],
  ['payload.groupId', 'another group'],
  ['payload.message', 'rewritten for the chat'],
  ['payload.severity', 'Warning'],
  ['payload.id', 'edited-id'],
  ['instrument.name', 'renamed'],
];

describe('review: a flow editing the raised msg leaves the error pending in the node', function () {
  this.timeout(30_000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  async function load(edit: [string, unknown]): Promise<{ raised: Msg[]; resolved: Msg[]; edited: Msg[] }> {
    const server = bServerFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        // the editing node on the first wire: Node-RED hands it the node's own msg, not a copy
        pollNode([['edit', 'raised'], ['resolved'], []]),
        setProperty('edit', edit[0], edit[1], ['edited']),
        { id: 'edited', type: 'helper' },
        { id: 'raised', type: 'helper' },
        { id: 'resolved', type: 'helper' },
      ],
      server.credentials,
    );
    return {
      raised: collect(helper.getNode('raised')),
      resolved: collect(helper.getNode('resolved')),
      edited: collect(helper.getNode('edited')),
    };
  }

  it(`a listed error: raised once, never resolved while listed, whatever the edit (seed ${SEED})`, async function () {
    const rng = new Rng(SEED);
    rng.next(); // the first draw of a small seed leans one way
    const cases = [...EDITS.slice(0, 5)].sort(() => rng.next() - 0.5).slice(0, CASES);
    for (const edit of cases) {
      const { raised, resolved, edited } = await load(edit);
      const error = sim.injectPendingError({ severity: 'Error', title: 'Tip lost' });
      await until(() => edited.length === 1, 'the raised msg edited by the flow', 10_000);
      await pollsDone(sim, 4);
      const why = `seed ${SEED}, ${edit[0]} edited`;
      assert.equal(raised.length, 1, `${why}: raised ${raised.length} times`);
      assert.deepEqual(
        resolved.map((m) => m.topic),
        [],
        `${why}: reported resolved while the instrument lists it`,
      );
      sim.resolvePendingError(error.id);
      await helper.unload();
      restartMemory();
    }
  });

  it('a pushed firmware error: held open as the instrument raised it, resolved once by its frame', async function () {
    const { raised, resolved, edited } = await load(['payload.title', 'Lab 3: Pressure fault']);
    await until(() => socketOpen(sim), 'the errors socket open', 10_000);
    const fw = sim.raiseFirmwareError({ title: 'Pressure fault', responses: ['Retry', 'Abort'] });
    await until(() => edited.length === 1, 'the raised msg edited by the flow', 10_000);
    await pollsDone(sim, 3);
    assert.equal(raised.length, 1);
    assert.equal(resolved.length, 0);
    sim.resolveFirmwareError(fw.id);
    await until(() => resolved.length === 1, 'the resolution', 10_000);
    assert.equal((resolved[0].payload as Msg).title, 'Pressure fault', 'the record as the instrument raised it');
  });

  it('msg.instrument edited by a flow is not the next msg’s', async function () {
    const { raised, edited } = await load(['instrument.name', 'renamed']);
    sim.injectPendingError({ severity: 'Error', title: 'First' });
    await until(() => edited.length === 1, 'the first msg edited', 10_000);
    sim.injectPendingError({ severity: 'Error', title: 'Second' });
    await until(() => raised.length === 2, 'the second raised msg', 10_000);
    assert.equal((raised[1].instrument as Msg).name, 'sim');
  });
});
