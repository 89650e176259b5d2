/**
 * Review finding (commit 404427a, the poll's list before each error's event): the state document keys an error by
 * source, id, title and severity, while the watch tells errors apart by their time stamp and group too. An instrument
 * that reuses an id for a new error of the same title and severity (ids from codes, a restart) makes one poll raise
 * the new error and resolve the old one. Once the list came first, the old error's 'resolved' event (after it)
 * removed the new error from the document: "0 pending" while the instrument waited for an answer, until the next
 * poll's list put it back. Events that follow the list of their own poll no longer change the document's errors.
 */
import assert from 'node:assert/strict';

import type { LabEvent } from '../../src/observe/lab-events';
import { fold, newMemory, type StateMemory } from '../../src/observe/state-document';
import { bServerFlow, messageWhere, pollsDone, stateNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow } from '../support/runtime';

type Msg = Record<string, unknown>;
type Doc = { errors: { pending: number; list: { id: string; title: string }[] } };

/** The runtime loads the built package (nodes/): its lab events are that module's. */

const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

describe('review: an id reused for an error of the same title stays pending in the state document', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  for (const listen of [false, true]) {
    it(`every document after the poll that saw the new error says 1 pending (listen ${String(listen)})`, async function () {
      const server = bServerFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, listen, wires: [[], [], []] },
          stateNode([['doc'], ['events']]),
          { id: 'doc', type: 'helper' },
          { id: 'events', type: 'helper' },
        ],
        server.credentials,
      );
      const firstDoc = messageWhere('doc', (m) => (m.payload as Doc).errors.pending === 1);
      const firstEvent = messageWhere('events', (m) => (m.payload as Msg).event === 'raised');
      const first = sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error' });
      await Promise.all([firstDoc, firstEvent]);

      // from now on: every state the lab events fold to, and every document lh-state sends
      const folded: number[] = [];
      let memory: StateMemory | undefined;
      const stop = built.onLabEvent((e: LabEvent) => {
        if (e.kind === 'errors') memory ??= newMemory('sim', 0);
        if (!memory) return; // from the first list on (a 'raised' before it would fold into an empty memory)
        memory = fold(memory, e, Date.now());
        folded.push(memory.doc.errors.pending);
      });
      const docs: Doc[] = [];
      const events: Msg[] = [];
      helper.getNode('doc').on('input', (m: Msg) => docs.push(m.payload as Doc));
      helper.getNode('events').on('input', (m: Msg) => events.push(m.payload as Msg));
      try {
        await new Promise((r) => setTimeout(r, 5)); // another time stamp: another error under the same id
        const second = sim.injectPendingError({
          id: first.id,
          reuseId: true,
          title: 'Tip pick-up failed',
          severity: 'Error',
        });
        assert.notEqual(second.timeStamp, first.timeStamp);
        await pollsDone(sim, 3);
      } finally {
        stop();
      }
      // the watch did see a new error: raised and the old one resolved, each told on lh-state's event output
      assert.deepEqual(
        events.map((p) => p.event).sort(),
        ['raised', 'resolved'],
        `lh-state's event msgs: ${JSON.stringify(events)}`,
      );
      assert.ok(folded.length > 0, 'the polls published their lists');
      assert.deepEqual(
        folded.filter((n) => n !== 1),
        [],
        `the pending count after each lab event: ${folded.join(',')}`,
      );
      assert.deepEqual(
        docs.map((d) => d.errors.pending).filter((n) => n !== 1),
        [],
        `documents sent: ${JSON.stringify(docs.map((d) => d.errors.pending))}`,
      );
    });
  }
});
