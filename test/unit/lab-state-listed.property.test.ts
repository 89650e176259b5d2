/**
 * Review finding (commit 404427a): a poll publishes its list before its raised and resolved events, each marked
 * `listed`. Whatever those events are (an id reused for an error of the same title: the old one resolved after the
 * list shows the new one; a new lease holder's sweep: raised again and then resolved, an error the list no longer
 * shows), the document's errors stay as the list says, at every step.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import { fold, newMemory, sameState, type StateMemory } from '../../src/observe/state-document';

const about = { instrumentKey: 'http://x|', instrument: 'X' };

const errorArb: fc.Arbitrary<PendingErrorView> = fc.record({
  source: fc.constantFrom<'A' | 'B'>('A', 'B'),
  id: fc.integer({ min: 1, max: 6 }).map(String),
  title: fc.constantFrom('Clot', 'Liquid level not detected'),
  severity: fc.constantFrom('Error', 'Warning'),
});

const beforeArb: fc.Arbitrary<LabEvent> = fc.oneof(
  fc.array(errorArb, { maxLength: 8 }).map((pending): LabEvent => ({ ...about, kind: 'errors', pending })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'raised', error, raisedAt: 0 })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'resolved', error })),
  errorArb.map((e): LabEvent => ({ ...about, kind: 'link', source: e.source, id: e.id, answerUrl: `https://p/${e.id}` })),
);

/** A poll's events after its list: any raised or resolved, marked `listed`, some redelivered. */
const afterArb: fc.Arbitrary<LabEvent> = fc.oneof(
  fc
    .tuple(errorArb, fc.boolean())
    .map(([error, redelivered]): LabEvent => ({ ...about, kind: 'raised', error, raisedAt: 0, redelivered, listed: true })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'resolved', error, listed: true })),
);

describe('lh-state document: the events after their poll’s list (pure)', function () {
  it('keep the errors the list says, after every event', function () {
    fc.assert(
      fc.property(
        fc.array(beforeArb, { maxLength: 20 }),
        fc.array(errorArb, { maxLength: 8 }),
        fc.array(afterArb, { maxLength: 10 }),
        (before, list, after) => {
          let memory: StateMemory = newMemory('X', 0);
          before.forEach((e, i) => (memory = fold(memory, e, i)));
          memory = fold(memory, { ...about, kind: 'errors', pending: list }, 100);
          const listed = memory.doc;
          after.forEach((e, i) => {
            memory = fold(memory, e, 200 + i);
            assert.ok(sameState(memory.doc, listed), `after ${JSON.stringify(e)}: ${JSON.stringify(memory.doc.errors)}`);
          });
        },
      ),
    );
  });

  it('an unmarked event still changes the document (a pushed frame, a poll whose list did not go out)', function () {
    const e: PendingErrorView = { source: 'A', id: '7', title: 'Clot', severity: 'Error' };
    let m = newMemory('X', 0);
    m = fold(m, { ...about, kind: 'errors', pending: [] }, 1);
    m = fold(m, { ...about, kind: 'raised', error: e, raisedAt: 0 }, 2);
    assert.equal(m.doc.errors.pending, 1);
    m = fold(m, { ...about, kind: 'resolved', error: e }, 3);
    assert.equal(m.doc.errors.pending, 0);
  });
});
