/**
 * Review finding: an instrument watched by two lh-error-poll nodes, one polling source A and one polling source B (or
 * one per severity filter), published each node's list as *the* pending list of the instrument. The state document
 * and `lh_errors_pending` then said "0 pending" after every poll of the B node while an A error waited for an answer.
 * An `errors` event now names the sources it lists; the document and the gauge replace only those sources' errors.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LabPublisher } from '../../src/nodes/shared/lab-publish';
import type { PolledError } from '../../src/nodes/shared/poll-messages';
import { type LabEvent, onLabEvent, type PendingErrorView } from '../../src/observe/lab-events';
import { LabMetrics } from '../../src/observe/metrics';
import { fold, newMemory } from '../../src/observe/state-document';

const about = { instrumentKey: 'http://x|https://x', instrument: 'X' };
const error = (source: 'A' | 'B', id: string): PendingErrorView => ({ source, id, title: `t${id}`, severity: 'Error' });

describe('review: the state document with two poll nodes of one instrument, one source each', function () {
  it('a poll of source B that lists nothing keeps the pending error of source A in the document', function () {
    const a = new LabPublisher({ instrumentKey: about.instrumentKey }, { name: 'X' } as never);
    const events: LabEvent[] = [];
    const stop = onLabEvent((e) => events.push(e));
    try {
      a.pending([{ source: 'A', records: [{ id: 7, title: 'Clot', severity: 'Error' } as unknown as PolledError] }]);
      a.pending([{ source: 'B', records: [] }]);
    } finally {
      stop();
    }
    let m = newMemory('X', 0);
    for (const e of events) m = fold(m, e, 1);
    assert.equal(m.doc.errors.pending, 1, 'the A error is still pending on the instrument');
    assert.equal(m.doc.errors.list[0]?.id, '7');
  });

  it('property: the document and lh_errors_pending list, per source, what the last poll of that source listed', async function () {
    const listArb = (source: 'A' | 'B'): fc.Arbitrary<PendingErrorView[]> =>
      fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { maxLength: 5 }).map((ids) => ids.map((i) => error(source, String(i))));
    const pollArb = fc.oneof(
      listArb('A').map((l) => ({ source: 'A' as const, list: l })),
      listArb('B').map((l) => ({ source: 'B' as const, list: l })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(pollArb, { minLength: 1, maxLength: 12 }), async (polls) => {
        let m = newMemory('X', 0);
        const metrics = new LabMetrics(() => 0);
        const last: Record<'A' | 'B', PendingErrorView[]> = { A: [], B: [] };
        try {
          for (const p of polls) {
            const event: LabEvent = { ...about, kind: 'errors', pending: p.list, sources: [p.source] };
            m = fold(m, event, 1);
            metrics.observe(event);
            last[p.source] = p.list;
          }
          const want = [...last.A, ...last.B].map((e) => `${e.source}:${e.id}`).sort();
          assert.deepEqual(m.doc.errors.list.map((e) => `${e.source}:${e.id}`).sort(), want);
          const gauge = await metrics.registry.getSingleMetric('lh_errors_pending')?.get();
          assert.equal(gauge?.values.find((v) => v.labels.instrument === 'X')?.value, want.length);
        } finally {
          metrics.close();
        }
      }),
    );
  });
});
