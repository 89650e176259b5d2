/**
 * Issue 17, point 2 (firmware errors): an answer to an error that is never in the error list (a firmware error) is
 * kept while lists are read, so it is never given twice and the poll can report the error resolved; an answer to a
 * listed error is retired once a list read after it no longer shows the error (its id may come back as a new error).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { AnswerLedger, LhError } from '../../src/client';

type Step = { kind: 'answer'; key: string; unlisted: boolean } | { kind: 'list'; shown: string[] } | { kind: 'tick' };

describe('answer ledger: answers to unlisted (firmware) errors', function () {
  it('keeps a firmware answer through list reads that do not show it (it was forgotten at the first one)', function () {
    let now = 1000;
    const ledger = new AnswerLedger(() => now);
    ledger.reserve('fw1', 'Abort', 'answer-error', { unlisted: true }).confirm();
    ledger.reserve('a7', 'Retry', 'answer-error').confirm();
    now += 10;
    ledger.forgetOver(new Set(), ledger.stamp());
    assert.equal(ledger.lookup('fw1')?.outcome, 'answered');
    assert.equal(ledger.lookup('a7'), undefined, 'a listed error no longer listed is over');
    assert.throws(
      () => ledger.reserve('fw1', 'Retry', 'answer-error', { unlisted: true }),
      (e: LhError) => e.kind === 'already-answered',
    );
  });

  it('property: over any sequence of answers and list reads, a firmware answer is never retired and never given twice', function () {
    const keys = fc.constantFrom('1', '2', '3', 'fw-a', 'fw-b');
    const step: fc.Arbitrary<Step> = fc.oneof(
      keys.map((key) => ({ kind: 'answer' as const, key, unlisted: key.startsWith('fw') })),
      fc.subarray(['1', '2', '3']).map((shown) => ({ kind: 'list' as const, shown })),
      fc.constant({ kind: 'tick' as const }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let now = 0;
        const ledger = new AnswerLedger(() => now);
        const given = new Map<string, number>();
        for (const s of steps) {
          now += 1;
          if (s.kind === 'tick') continue;
          if (s.kind === 'list') {
            ledger.forgetOver(new Set(s.shown), ledger.stamp());
            continue;
          }
          try {
            ledger.reserve(s.key, 'Abort', 'answer-error', { unlisted: s.unlisted }).confirm();
            given.set(s.key, (given.get(s.key) ?? 0) + 1);
          } catch (err) {
            assert.equal((err as LhError).kind, 'already-answered');
          }
        }
        for (const key of ['fw-a', 'fw-b']) {
          assert.ok((given.get(key) ?? 0) <= 1, `${key} answered ${given.get(key)} times`);
          if (given.has(key)) assert.equal(ledger.lookup(key)?.outcome, 'answered');
        }
      }),
      { numRuns: 500 },
    );
  });
});
