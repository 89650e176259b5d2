/**
 * Review finding (the state stream, two polls of one instrument): with two error watches of one instrument, one polling
 * source A and one source B, each poll's list went after the errors of the other source. Errors of one severity are
 * listed in that order, so the document's list turned round at every poll (`A-7, B-u` after B's poll, `B-u, A-7` after
 * A's): a state document (retained, at most 2 a second) and a fleet-tab update at every poll, while nothing changed on
 * the instrument. README: a document is sent "whenever it changes". The list is now A's errors, then B's, whichever
 * was polled last.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import { fold, newMemory } from '../../src/observe/state-document';

const about = { instrumentKey: 'http://x|https://x', instrument: 'X' };

describe('review: the state document with two watches of one instrument, one source each', function () {
  it('property: polls that list what the last ones did change no document, whatever the order of the polls', function () {
    const errorArb = (source: 'A' | 'B'): fc.Arbitrary<PendingErrorView[]> =>
      fc
        .uniqueArray(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.constantFrom('Fatal', 'Error', 'Warning')), {
          maxLength: 4,
          selector: ([id]) => id,
        })
        .map((l) => l.map(([id, severity]) => ({ source, id: String(id), title: `t${id}`, severity })));
    fc.assert(
      fc.property(
        errorArb('A'),
        errorArb('B'),
        fc.array(fc.constantFrom<'A' | 'B' | 'AB'>('A', 'B', 'AB'), { minLength: 2, maxLength: 12 }),
        (listA, listB, polls) => {
          let m = newMemory('X', 0);
          const poll = (which: 'A' | 'B' | 'AB'): LabEvent => ({
            ...about,
            kind: 'errors',
            pending: which === 'A' ? listA : which === 'B' ? listB : [...listA, ...listB],
            sources: which === 'AB' ? ['A', 'B'] : [which],
          });
          // both sources polled once: the instrument's state is known
          m = fold(m, poll('A'), 1);
          m = fold(m, poll('B'), 2);
          const known = m.doc;
          polls.forEach((which, i) => {
            m = fold(m, poll(which), 3 + i);
            assert.equal(m.doc, known, `a new document after a poll of ${which} that listed what it did before`);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
