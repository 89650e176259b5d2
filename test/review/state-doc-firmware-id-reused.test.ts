/**
 * Review finding (review11's open item): one change told in two lab events let lh-state send the step between. A
 * firmware frame that reuses the id of an open firmware error resolves the old one and raises the new one; a document
 * lh-state's rate let out after the first event listed neither (with coordination a Redis round trip lies between the
 * two). Events of one change are now marked `more` until the last (or a 'settled'), and the document waits for it.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { bServerFlow, stateNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

describe('review: a firmware id reused never shows the step between in the state document', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  async function load(s: Simulator): Promise<string[][]> {
    const server = bServerFlow(s, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, wires: [[], [], []] },
        stateNode([['docs'], []]),
        { id: 'docs', type: 'helper' },
      ],
      server.credentials,
    );
    const documents: string[][] = [];
    helper.getNode('docs').on('input', (msg: { payload: { errors: { list: { title: string }[] } } }) => {
      documents.push(msg.payload.errors.list.map((e) => e.title));
    });
    return documents;
  }

  it('each document lists the old error or the new one, never none', async function () {
    const documents = await load(sim);
    await until(() => sim.eventSocketInfo.counts.errors === 1, 'the errors socket', 10000);
    // a firmware error as its frame says it (the simulator's own firmware errors never reuse an active id)
    const push = (title: string): number =>
      sim.publishRawFrame(
        'errors',
        JSON.stringify({
          code: 'RuntimeError',
          description: title,
          data: { id: 'fw-1', title, severity: 'Error', source: 'Firmware' },
        }),
      );
    let title = 'Pressure fault 0';
    push(title);
    await until(() => documents.some((d) => d.includes(title)), 'a document with the first error', 10000);
    for (let round = 1; round <= 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 120)); // past lh-state's rate: a document may go at once
      title = `Pressure fault ${round}`;
      push(title); // the same id, another error: the old one is over
      await until(() => documents.some((d) => d.includes(title)), `a document with ${title}`, 10000);
    }
    const first = documents.findIndex((d) => d.length > 0);
    assert.deepEqual(
      documents.slice(first).filter((d) => d.length !== 1),
      [],
      `documents: ${JSON.stringify(documents)}`,
    );
  });
});
