/**
 * Issue 30 point 1: one home per instrument. The lh-server nodes of one instrument, however its URL is spelled and
 * with or without interface B, attach to one home: one answer ledger, one start claim, one audit chain per spelling.
 * The last to close closes the home; a redeploy attaches again and finds what it remembered.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';

interface Home {
  identity: string;
  attached: number;
}
interface ServerNode {
  home?: Home;
  client?: {
    runStarts: { claim(what: string, operation: string): { release(): void } };
    answers: { a: unknown };
  };
}

describe('lh-server: one home per instrument (issue 30.1)', function () {
  const sim = useInstrument({ afterEach: () => restartMemory() });

  function twoServers(): { nodes: Record<string, unknown>[]; credentials: Record<string, Record<string, string>> } {
    const one = serverFlow(sim, { id: 's1' });
    // the same instrument spelled otherwise (localhost for 127.0.0.1, a trailing slash), without interface B
    const two = serverFlow(sim, {
      id: 's2',
      withB: false,
      config: { baseUrl: `${sim.baseUrl.replace('127.0.0.1', 'localhost')}/` },
    });
    return { nodes: [...one.nodes, ...two.nodes], credentials: { ...one.credentials, ...two.credentials } };
  }

  it('shares one home between the lh-server nodes of an instrument; a redeploy finds it again', async function () {
    const flow = twoServers();
    await loadFlow(flow.nodes, flow.credentials);
    const s1 = helper.getNode('s1') as unknown as ServerNode;
    const s2 = helper.getNode('s2') as unknown as ServerNode;
    const home = s1.home;
    assert.ok(home && s1.client && s2.client);
    assert.equal(s2.home, home);
    assert.equal(home.attached, 2);
    assert.equal(s1.client.answers.a, s2.client.answers.a, 'one answer ledger');
    const claim = s1.client.runStarts.claim('protocol 1', 'start-run');
    assert.throws(() => s2.client?.runStarts.claim('protocol 1', 'start-run'), /another start on this instrument/);
    claim.release();

    await helper.setFlows(flow.nodes as never, 'full', flow.credentials as never);
    const again = helper.getNode('s1') as unknown as ServerNode;
    assert.notEqual(again, s1, 'new nodes');
    assert.equal(again.home, home, 'the same home, with what it remembered');
    assert.equal(home.attached, 2);

    await helper.unload();
    assert.equal(home.attached, 0, 'closed with the last lh-server node');
  });
});
