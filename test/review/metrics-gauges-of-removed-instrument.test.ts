/**
 * Review finding (metrics): the gauges of an instrument stayed on the page after its lh-server node was renamed or
 * removed in a redeploy: `lh_instrument_up{instrument="bay 2"} 1` and `lh_errors_pending{instrument="bay 2"} 1` until
 * Node-RED restarted, an instrument that no longer exists "up" with an error pending (an alert on pending errors
 * firing for ever, a count of instruments up counting a ghost). Each redeploy that renames an instrument left one more
 * such series. The gauges of an instrument no lh-server node names any more are now taken off the page; its counters
 * stay (what was counted was counted).
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: the gauges of an instrument renamed or removed in a redeploy', function () {
  this.timeout(30000);
  const sim = useInstrument({ adminServer: true });

  function flow(name: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { name } });
    return {
      nodes: [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
      ],
      credentials: server.credentials,
    };
  }

  async function page(): Promise<string> {
    const res = (await helper.request().get('/lh/metrics').expect(200)) as unknown as { text: string };
    return res.text;
  }

  const gauges = (text: string, name: string): string[] =>
    text
      .split('\n')
      .filter(
        (line) =>
          /^lh_(instrument_up|errors_pending|coordination_lease_holder)\{/.test(line) && line.includes(`instrument="${name}"`),
      );

  it('a renamed instrument leaves no gauge of its old name; a removed one leaves none at all', async function () {
    sim.injectPendingError({ severity: 'Error', title: 'Clot' });
    const first = flow('bay 2');
    await helper.load([tlsConfigNode, ...packageNodes()], first.nodes, first.credentials);
    await until(async () => gauges(await page(), 'bay 2').length === 2, 'the gauges of "bay 2"', 10_000);
    assert.deepEqual(gauges(await page(), 'bay 2').sort(), [
      'lh_errors_pending{instrument="bay 2"} 1',
      'lh_instrument_up{instrument="bay 2"} 1',
    ]);

    // redeployed under a new name: only the new name has gauges
    const renamed = flow('Bay 2 (Nimbus)');
    await helper.setFlows(renamed.nodes as never, 'full', renamed.credentials as never);
    await until(async () => gauges(await page(), 'Bay 2 (Nimbus)').length === 2, 'the gauges of the new name', 10_000);
    const text = await page();
    assert.deepEqual(gauges(text, 'bay 2'), [], 'no gauge of the old name');
    assert.match(text, /lh_errors_raised_total\{instrument="bay 2",source="A",severity="error"\} 1/, 'its counters stay');

    // the instrument removed from the flows: no gauge says it is up, or has errors pending
    await helper.setFlows([] as never, 'full');
    assert.deepEqual(gauges(await page(), 'Bay 2 (Nimbus)'), []);
  });

  it('two lh-server nodes of one name, one removed: the gauges stay for the other', async function () {
    sim.injectPendingError({ severity: 'Error', title: 'Clot' });
    const one = flow('bay 3');
    const second = {
      id: 'server2',
      type: 'lh-server',
      name: 'bay 3',
      baseUrl: sim.baseUrl,
      instrumentUrl: '',
      clientKey: 'nodered1',
      tls: '',
      timeout: 5000,
    };
    const credentials = { ...one.credentials, server2: one.credentials.server };
    await helper.load([tlsConfigNode, ...packageNodes()], [...one.nodes, second], credentials);
    await until(async () => gauges(await page(), 'bay 3').length === 2, 'the gauges of "bay 3"', 10_000);
    // only the second lh-server node removed (a 'nodes' deploy: the watch and the first server go on)
    await helper.setFlows(one.nodes as never, 'nodes', one.credentials as never);
    assert.equal(gauges(await page(), 'bay 3').length, 2, 'the other lh-server of that name still runs');
  });
});
