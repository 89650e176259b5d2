/**
 * Review finding (review67, of review66's merges one at a time): lh-settings checked a set's msg.payload inside its
 * turn, so a msg with no setting in it (`{}`) or a wrong value waited behind every merge of the instrument before it
 * (each up to three requests, each up to the node's timeout) before it was refused: a bad input held in the node,
 * its error late at Catch, read against msg.payload as it was then, not as it came. lh-service-routine checks first,
 * as the rule says (every bad input refused before anything, waiting included). Now lh-settings does too.
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: a bad lh-settings set is refused without waiting for the merges before it', function () {
  this.timeout(20000);
  const sim = useInstrument({ afterEach: () => sim.setFaults({}) });

  it('a payload naming no setting reaches Catch while an earlier merge is still under way', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'set', type: 'lh-settings', server: 'server', operation: 'set-software-settings', mode: 'merge', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['set'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    const out = collect(helper.getNode('out'));
    // every answer of the instrument is slow: the first merge holds the turn for seconds
    sim.setFaults({ latencyMs: 1000 });
    const asked = sim.requests.length;
    helper.getNode('set').receive({ payload: { generateRunReport: true } });
    await until(() => sim.requests.length > asked, 'the first merge under way');
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('set').receive({ payload: {} });
    const refusal = await caught;
    assert.equal(out.length, 0, 'refused while the first merge was still under way');
    assert.match(String((refusal.error as Msg).message), /payload.*must name at least one software setting/);
    await until(() => out.length === 1, 'the first merge done', 12000);
  });
});
