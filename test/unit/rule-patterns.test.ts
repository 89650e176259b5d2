import assert from 'node:assert/strict';

import fc from 'fast-check';
import { RE2JS } from 're2js';

import {
  compileRules,
  matchedText,
  matchRule,
  MAX_MATCHED_TEXT,
  MAX_PATTERN_LENGTH,
} from '../../src/nodes/lh-error-policy/rules';

/** Issue 17.6: a rule pattern can never freeze Node-RED. */
describe('lh-error-policy rule patterns (bounded matching)', function () {
  const rule = (pattern: string): Record<string, unknown> => ({ pattern, mode: 'manual' });

  it('matches (\\w+\\s*)+failed on a 60-character message with the linear-time engine, at once', function () {
    const [compiled] = compileRules([rule('(\\w+\\s*)+failed')]);
    // the engine is the promise (RE2: time linear in the text whatever the pattern), checked before any matching
    assert.ok(compiled.regex instanceof RE2JS, 'the pattern is compiled by RE2JS, not by the backtracking RegExp');
    const message = `${'a'.repeat(59)}!`; // the classic catastrophic case for a backtracking engine
    const started = process.hrtime.bigint();
    assert.equal(matchRule([compiled], 'A', { title: 'Pipetting', message }), undefined);
    assert.equal(matchRule([compiled], 'A', { title: 'Tip pickup failed', message })?.index, 0);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 2000, `matching took ${ms} ms`); // generous: the old RegExp took 25 s+
  });

  it('refuses at deploy what RE2 cannot run in linear time, naming the rule and the reason', function () {
    const refused: [string, RegExp][] = [
      ['(a)\\1', /rules\[1\]\.pattern is not a regular expression .*linear time.*invalid escape sequence/],
      ['(?=door)open', /rules\[1\]\.pattern .*lookahead and lookbehind are not supported/],
      ['(?<=door)open', /rules\[1\]\.pattern .*lookahead and lookbehind are not supported/],
      ['(?<!x)y', /rules\[1\]\.pattern .*lookahead and lookbehind are not supported/],
      ['x{1001}', /rules\[1\]\.pattern .*invalid repeat count/],
      ['(', /rules\[1\]\.pattern is not a regular expression/],
    ];
    for (const [pattern, message] of refused) {
      assert.throws(() => compileRules([rule('ok'), rule(pattern)]), message, pattern);
    }
    // legal, short, linear, and still 100 ms to 0.5 s a match on 4 KiB (review43): refused by program size
    for (const costly of ['[^x]{1000}[^y]{500}q', '[^x]{1000}[^y]{1000}[^z]{1000}q', '[^x]{999}[^y]{200}', 'a{1000}b']) {
      assert.throws(
        () => compileRules([rule('ok'), rule(costly)]),
        /rules\[1\]\.pattern is too costly to match: it compiles to \d+ instructions, at most 1000/,
        costly,
      );
    }
    for (const fine of ['[^x]{100}q', '(?:[^x]{100}){9}', 'tip (lost|missing)', '\\d{3}-[A-Z]{2,10}']) {
      assert.equal(compileRules([rule(fine)]).length, 1, fine);
    }
    assert.throws(
      () => compileRules([rule('a'.repeat(MAX_PATTERN_LENGTH + 1))]),
      /rules\[0\]\.pattern must be at most 500 characters/,
    );
    assert.equal(compileRules([rule('a'.repeat(MAX_PATTERN_LENGTH))]).length, 1);
  });

  it('keeps JS spellings users write: \\/, named groups, \\u escapes, [\\s\\S]', function () {
    const rules = compileRules([rule('door\\/lid'), rule('(?<what>clot)'), rule('\\u0041rm'), rule('tip[\\s\\S]+failed')]);
    assert.equal(matchRule(rules, 'A', { title: 'Door/Lid open' })?.index, 0);
    assert.equal(matchRule(rules, 'A', { title: 'a CLOT' })?.index, 1);
    assert.equal(matchRule(rules, 'A', { title: 'arm stuck' })?.index, 2);
    assert.equal(matchRule(rules, 'A', { title: 'Tip', message: 'pickup failed' })?.index, 3, 'across the title/message line');
  });

  it('matches only the first 4,096 characters of the title and the message', function () {
    const [compiled] = compileRules([rule('needle')]);
    const far = `${'x'.repeat(MAX_MATCHED_TEXT + 10)}needle`;
    assert.equal(matchRule([compiled], 'A', { title: 'e', message: far }), undefined);
    assert.equal(matchRule([compiled], 'A', { title: 'needle', message: far })?.index, 0);
    assert.ok(matchedText({ title: far, message: far }).length <= MAX_MATCHED_TEXT);
  });

  describe('property: over generated patterns and texts', function () {
    this.timeout(60000);
    // A grammar of the safe subset both engines read alike: ASCII literals, classes, groups, alternation, quantifiers.
    const atom = fc.oneof(
      fc.constantFrom('a', 'b', 'B', 'x', '1', ' ', 'z', '-'),
      fc.constantFrom('\\w', '\\d', '\\s', '.', '[ab]', '[^a]', '[a-c]', '\\.', '\\b'),
    );
    const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string }>((tie) => ({
      re: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        atom,
        fc.tuple(tie('re'), tie('re')).map(([a, b]) => a + b),
        fc.tuple(tie('re'), tie('re')).map(([a, b]) => `(${a}|${b})`),
        fc.tuple(tie('re'), fc.constantFrom('*', '+', '?', '{1,3}', '*?', '+?')).map(([a, q]) => `(${a})${q}`),
        fc.tuple(tie('re')).map(([a]) => `(?:${a})`),
      ),
    })).re;
    const text = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'x', 'X', '1', ' ', '\n', '-', '.', 'z'), maxLength: 60 });

    it('agrees with JS RegExp on the safe subset', function () {
      fc.assert(
        fc.property(pattern, text, text, (p, title, message) => {
          const [compiled] = compileRules([rule(p)]);
          const expected = new RegExp(p.trim(), 'i').test(`${title}\n${message}`); // the dialog's pattern is trimmed
          assert.equal(
            matchRule([compiled], 'A', { title, message }) !== undefined,
            expected,
            `${p} on ${JSON.stringify([title, message])}`,
          );
        }),
        { numRuns: 400 },
      );
    });

    it('stays bounded: every accepted pattern is RE2-compiled, nested quantifiers on long hostile texts return', function () {
      const nested = fc.tuple(pattern, fc.constantFrom('+', '*')).map(([p, q]) => `((${p})${q})${q}!`);
      const hostile = fc
        .tuple(fc.constantFrom('a', 'ab', 'a ', '1a'), fc.integer({ min: 200, max: 4000 }))
        .map(([s, n]) => s.repeat(n));
      const started = Date.now();
      fc.assert(
        fc.property(nested, hostile, (p, message) => {
          const [compiled] = compileRules([rule(p)]);
          assert.ok(compiled.regex instanceof RE2JS);
          matchRule([compiled], 'A', { title: '', message });
        }),
        { numRuns: 60 },
      );
      assert.ok(Date.now() - started < 45000, 'generous bound: a backtracking engine would not finish');
    });
  });
});
