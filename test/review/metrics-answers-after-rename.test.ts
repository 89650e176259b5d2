/**
 * Review finding (review34, metrics): an answer is published to the metrics by instrument key alone (the answering
 * code does not know the lh-server's name), and the metrics named it by the first name they ever saw for that key.
 * After the lh-server was renamed in a redeploy ("bay 1" → "Bay 1 (Nimbus)", the same instrument), every later answer
 * was counted in `lh_errors_answered_total{instrument="bay 1"}` while its raises counted under the new name: a
 * dashboard of answered / raised per instrument showed the new name never answering and the old one answering
 * errors it never raised. The metrics now name an answer by the instrument's current name.
 */
import assert from 'node:assert/strict';

import { pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, nextMessage, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: answers counted under the name the instrument has now', function () {
  this.timeout(30000);
  const sim = useInstrument({ adminServer: true, afterEach: () => restartMemory() });

  function flow(name: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { name } });
    return {
      nodes: [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
      ],
      credentials: server.credentials,
    };
  }

  async function page(): Promise<string> {
    const res = (await helper.request().get('/lh/metrics').expect(200)) as unknown as { text: string };
    return res.text;
  }

  const count = (text: string, metric: string, name: string): number =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${metric}{instrument="${name}"`))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);

  async function raiseAndAnswer(): Promise<void> {
    const error = sim.injectPendingError({ severity: 'Error', title: 'Clot', responses: ['Retry', 'Abort'] });
    await pollsDone(sim, 2);
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('answer').receive({ errorId: error.id, selectedResponse: 'Abort' });
    assert.equal((await out).outcome, 'answered');
  }

  it('an answer after a rename counts under the new name, beside its raise', async function () {
    const first = flow('bay 1');
    await helper.load([tlsConfigNode, ...packageNodes()], first.nodes, first.credentials);
    await raiseAndAnswer();
    await until(async () => count(await page(), 'lh_errors_answered_total', 'bay 1') === 1, 'the first answer', 10_000);

    const renamed = flow('Bay 1 (Nimbus)');
    await helper.setFlows(renamed.nodes as never, 'full', renamed.credentials as never);
    await raiseAndAnswer();
    await until(async () => count(await page(), 'lh_errors_raised_total', 'Bay 1 (Nimbus)') === 1, 'the raise', 10_000);
    const text = await page();
    assert.equal(count(text, 'lh_errors_answered_total', 'Bay 1 (Nimbus)'), 1, `answered under the new name:\n${text}`);
    assert.equal(count(text, 'lh_errors_answered_total', 'bay 1'), 1, 'the old name keeps only its own answer');
  });
});
