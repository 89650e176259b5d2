/**
 * Review finding (seen while checking commit 404427a's consumers of lab events): lh_errors_raised_total counts an
 * error once while it is pending, by source, id and title. Without coordination the watch published a poll's raised
 * events before its resolved ones, so an id reused for an error of the same title (the old one resolved, the new one
 * raised by one poll) found the old error still counted: the new error was never counted. With coordination the gate
 * passes resolved first, and it was. The watch now publishes resolved before raised either way.
 */
import assert from 'node:assert/strict';

import { bServerFlow, messageWhere, pollNode, pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { loadFlow } from '../support/runtime';

/** The runtime loads the built package (nodes/): its metrics listen to that module's lab events. */

const built = require('../../nodes/observe/metrics.js') as typeof import('../../src/observe/metrics');

describe('review: an id reused for an error of the same title counts as a raised error', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('lh_errors_raised_total says 2 after two errors under one id, one after the other', async function () {
    const metrics = new built.LabMetrics();
    try {
      const server = bServerFlow(sim, { withB: false });
      await loadFlow(
        [...server.nodes, pollNode([['raised'], [], []], { listen: false }), { id: 'raised', type: 'helper' }],
        server.credentials,
      );
      const first = sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error' });
      await messageWhere('raised', (m) => m.errorId === first.id);
      await new Promise((r) => setTimeout(r, 5)); // another time stamp: another error
      const again = messageWhere('raised', (m) => m.errorId === first.id);
      sim.injectPendingError({ id: first.id, reuseId: true, title: 'Tip pick-up failed', severity: 'Error' });
      await again;
      await pollsDone(sim, 1);
      const text = (await metrics.render()).body;
      const line = text.split('\n').find((l) => l.startsWith('lh_errors_raised_total{') && l.includes('severity="error"'));
      assert.ok(line, text);
      assert.equal(Number(line.split(' ').pop()), 2, line);
    } finally {
      metrics.close();
    }
  });
});
