/**
 * Review finding (the state stream, two polls of one instrument): an lh-error-poll node with a *Severity* filter
 * published its filtered list as the pending errors of its source. A lab that watches one instrument with two error
 * watches of one source, a Fatal-only one that pages someone and one that logs everything, got a state document (and
 * `lh_errors_pending`) that flipped at every poll between the two lists: "1 pending" after the Fatal-only watch polled,
 * "2 pending" after the other, a retained document and a wall-screen row changing twice a poll interval while nothing
 * changed on the instrument. README: `errors.pending` counts the errors the instrument lists, and the gauge "errors the
 * instrument listed at the last poll". The watch now tells the lab the instrument's whole list; its filter still picks
 * what it raises.
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type Doc = { errors: { pending: number; list: { id: string; severity: string }[] } };

describe('review: the state document with two error watches of one source and different severity filters', function () {
  this.timeout(60000);
  const sim = useInstrument();

  for (const filters of [
    ['Fatal', ''],
    ['Fatal', 'Warning'],
    ['Error', 'Error'],
  ] as const) {
    it(`says what the instrument lists, however the watches filter (${filters.map((f) => f || 'all').join(' and ')})`, async function () {
      sim.injectPendingError({ id: '71', severity: 'Fatal', title: 'Deck crash' });
      sim.injectPendingError({ id: '72', severity: 'Warning', title: 'Tips low' });
      sim.injectPendingError({ id: '73', severity: 'Error', title: 'Clot' });
      const server = serverFlow(sim, { withB: false });
      const polls = (): number => sim.requests.filter((r) => r.path.includes('check-for-pending-errors')).length;
      await helper.load(
        [...packageNodes(), tlsConfigNode],
        [
          ...server.nodes,
          ...filters.map((minSeverity, i) => ({
            id: `poll${i}`,
            type: 'lh-error-poll',
            server: 'server',
            source: 'A',
            minSeverity,
            interval: 0.5,
            wires: [[], [], []],
          })),
          {
            id: 'state',
            type: 'lh-state',
            server: 'server',
            rate: '50',
            machineInterval: '0',
            repeat: '0',
            wires: [['doc'], []],
          },
          { id: 'doc', type: 'helper' },
        ],
        server.credentials,
      );
      const docs: Doc[] = [];
      helper.getNode('doc').on('input', (msg: Msg) => docs.push(msg.payload as Doc));
      await until(() => docs.length > 0, 'a first document', 15_000);
      const from = polls();
      await until(() => polls() >= from + 8, 'four polls of each watch', 20_000);
      const said = docs.map((d) => d.errors.pending);
      assert.ok(
        said.every((n) => n === 3),
        `documents said ${JSON.stringify(said)} pending; the instrument lists 3 all along`,
      );
      assert.deepEqual(
        docs.at(-1)?.errors.list.map((e) => e.id),
        ['71', '73', '72'],
        'most severe first',
      );
      // nothing changed on the instrument: the first document and the one 2 s after the deploy, no more
      assert.ok(docs.length <= 2, `${docs.length} documents for one state of the instrument`);
    });
  }
});
