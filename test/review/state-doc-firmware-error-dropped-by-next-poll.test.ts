/**
 * Review finding: a firmware error (pushed on instincterrors during a run; the instrument never lists it in GET
 * errors) was raised into the state document, and the poll the push triggers at once then published the instrument's
 * list for source A without it: the document (and lh_errors_pending) lost the error within a quarter of a second,
 * while it still waited for an answer. The list a poll publishes now holds the watch's open firmware errors too.
 */
import assert from 'node:assert/strict';

import type { LabEvent } from '../../src/observe/lab-events';
import { fold, newMemory, type StateMemory } from '../../src/observe/state-document';
import { Simulator } from '../../src/simulator';
import { bServerFlow, messageWhere, pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

const POLL_PATH = '/api/v1/errors/check-for-pending-errors';

/** The runtime loads the built package (nodes/): its lab events are that module's. */

const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

describe('review: a firmware error stays in the state document through the polls', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  async function load(s: Simulator): Promise<void> {
    const server = bServerFlow(s, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
  }

  it('pending in the document after the polls that follow its push, gone when it is resolved', async function () {
    let memory: StateMemory = newMemory('sim', 0);
    const stop = built.onLabEvent((e: LabEvent) => {
      memory = fold(memory, e, Date.now());
    });
    try {
      await load(sim);
      const events = (helper.getNode('server') as unknown as { client: { events: { state(c: string): string } } }).client.events;
      await until(
        () =>
          sim.eventSocketInfo.counts.errors === 1 &&
          events.state('errors') === 'connected' &&
          sim.requests.filter((r) => r.path === POLL_PATH).length >= 2,
        'the errors socket and the poll on connect',
        10000,
      );
      const fw = sim.raiseFirmwareError({ title: 'Pressure fault', responses: ['Retry', 'Abort'] });
      await messageWhere('raised', (m) => m.errorId === fw.id, 2000);
      await pollsDone(sim, 3);
      assert.deepEqual(
        memory.doc.errors.list.map((e) => e.title),
        ['Pressure fault'],
        'the firmware error waits for an answer: the document lists it',
      );
      sim.resolveFirmwareError(fw.id);
      await until(() => memory.doc.errors.pending === 0, 'resolved: out of the document', 5000);
    } finally {
      stop();
    }
  });
});
