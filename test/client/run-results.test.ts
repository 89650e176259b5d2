/**
 * Issue 17, point 2: run results are mapped by whole known words. A word that is not known is `unknown` with the
 * instrument's text, never `completed` — whatever its letter case, blanks, or the known word it contains.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { mapRunResult, RUN_RESULT_WORDS } from '../../src/client';

const KNOWN = Object.entries(RUN_RESULT_WORDS).flatMap(([outcome, words]) => words.map((word) => ({ outcome, word })));

/** A word in any letter case. */
const anyCase = (word: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
const blanks = fc.constantFrom('', ' ', '  ', '\t', '\n', ' \t ');

describe('run results: whole known words only (mapRunResult)', function () {
  it('maps the review’s words to unknown with the instrument’s text (they were completed by substring)', function () {
    for (const word of [
      'Not completed',
      'Incomplete',
      'Unsuccessful',
      'NotSuccessful',
      'Success?',
      'Completed with errors',
      'OK',
      'Finished',
    ]) {
      assert.deepEqual(mapRunResult(word), { result: 'unknown', resultText: word }, word);
    }
  });

  it('maps the known words in any letter case and with surrounding blanks', function () {
    assert.deepEqual(mapRunResult('Completed'), { result: 'completed', resultText: 'Completed' });
    assert.deepEqual(mapRunResult(' ABORTED\n'), { result: 'aborted', resultText: ' ABORTED\n' });
    assert.deepEqual(mapRunResult('failed'), { result: 'failed', resultText: 'failed' });
    assert.deepEqual(mapRunResult('Cancelled'), { result: 'aborted', resultText: 'Cancelled' });
  });

  it('maps what is not text to unknown, keeping numbers as text', function () {
    assert.deepEqual(mapRunResult(undefined), { result: 'unknown', resultText: null });
    assert.deepEqual(mapRunResult(null), { result: 'unknown', resultText: null });
    assert.deepEqual(mapRunResult(2), { result: 'unknown', resultText: '2' });
    assert.deepEqual(mapRunResult({ result: 'Completed' }), { result: 'unknown', resultText: null });
  });

  it('property: a known word in any case with any surrounding blanks maps to its outcome', function () {
    fc.assert(
      fc.property(
        fc.constantFrom(...KNOWN).chain((k) => fc.tuple(fc.constant(k), blanks, anyCase(k.word), blanks)),
        ([k, before, word, after]) => {
          const text = `${before}${word}${after}`;
          assert.deepEqual(mapRunResult(text), { result: k.outcome, resultText: text });
        },
      ),
    );
  });

  it('property: a known word with anything added inside or around it (a prefix, a suffix, a negation, punctuation) is unknown', function () {
    const extra = fc.oneof(
      fc.constantFrom('Not', 'not ', 'Un', 'In', 'un', 'No', '?', '.', '!', ' with errors', '_', '-', 'Partially '),
      fc.string({ minLength: 1, maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...KNOWN), extra, fc.constantFrom('prefix', 'suffix', 'inside'), (k, add, where) => {
        const text =
          where === 'prefix'
            ? `${add}${k.word}`
            : where === 'suffix'
              ? `${k.word}${add}`
              : `${k.word.slice(0, 3)}${add}${k.word.slice(3)}`;
        const mapped = mapRunResult(text);
        fc.pre(!KNOWN.some((other) => other.word === text.trim().toLowerCase())); // e.g. "complete" + "d"
        assert.equal(mapped.result, 'unknown', text);
        assert.equal(mapped.resultText, text);
      }),
    );
  });

  it('property: any text maps to completed only when it is a completed word, and always keeps the text', function () {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const mapped = mapRunResult(text);
        assert.equal(mapped.resultText, text);
        assert.equal(mapped.result === 'completed', RUN_RESULT_WORDS.completed.includes(text.trim().toLowerCase()));
      }),
      { numRuns: 2000 },
    );
  });
});
