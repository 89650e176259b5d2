/**
 * Review finding (review43's RE2 patterns, f36ef78's bounds): the error policy's dialog checked a rule's pattern as a
 * JavaScript RegExp only, so a pattern the runtime refuses at deploy (a lookahead or lookbehind, a backreference, more
 * than 500 characters) had no red mark in the dialog: Deploy went through, and the node then refused all its rules.
 * The dialog now refuses what the runtime refuses, but for the compiled program's size, which only the runtime's RE2
 * measures. Seeded patterns (LH_SEED=<n> replays) built from pieces both engines read alike and the ones RE2 refuses
 * (anchors are left out: JavaScript refuses `^?`, RE2 takes it, a difference of the dialog's that is older).
 */
import assert from 'node:assert/strict';

import { compilePattern } from '../../src/nodes/lh-error-policy/rules';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

const PIECES = [
  'tip',
  'door',
  ' ',
  '.',
  '.*',
  '\\d+',
  '\\s',
  '\\.',
  '\\\\',
  '\\\\1',
  '\\/',
  'a|b',
  '(lost|missing)',
  '(?:x)',
  '(?<n>y)',
  '[a-z]',
  '[(?=]',
  '[\\]1]',
  '{2}',
  '+',
  '?',
  // refused by RE2 at deploy
  '(?=x)',
  '(?!x)',
  '(?<=x)',
  '(?<!x)',
  '(x)\\1',
];

describe('review: the error policy dialog refuses the patterns the runtime refuses', function () {
  const rules = editorDefinition('lh-error-policy').defaults.rules;
  const dialogSays = (pattern: string): boolean =>
    (rules.validate as Check).call({ _: (k: string) => k }, [
      { id: 'r1', source: 'A', pattern, steps: [{ mode: 'manual', answer: '', delay: '', inputs: '' }] },
    ]) === true;
  const runtimeSays = (pattern: string): boolean | 'size' => {
    try {
      compilePattern(pattern);
      return true;
    } catch (err) {
      return /too costly/.test(String(err)) ? 'size' : false;
    }
  };

  it('lookaround, backreferences and over 500 characters are refused in the dialog, as at deploy', function () {
    for (const p of ['(?=x)tip', 'tip(?!s)', '(?<=a)b', '(?<!a)b', '(a)\\1', 'x'.repeat(501)]) {
      assert.equal(runtimeSays(p), false, `the runtime takes ${p.slice(0, 40)}`);
      assert.equal(dialogSays(p), false, `the dialog takes ${p.slice(0, 40)}`);
    }
    for (const p of ['tip (lost|missing)', '\\\\1', '[(?=]', '(?<n>y)', 'x'.repeat(500)]) {
      assert.equal(dialogSays(p), true, `the dialog refuses ${p.slice(0, 40)}`);
    }
  });

  it('property: over seeded patterns the dialog says what the runtime says (program size aside)', function () {
    console.log(`      policy pattern seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    for (let round = 0; round < 2000; round++) {
      const parts: string[] = [];
      for (let n = rng.int(1, 6); n > 0; n--) parts.push(rng.pick(PIECES));
      const pattern = rng.chance(0.05) ? parts.join('').padEnd(rng.int(495, 510), 'q') : parts.join('');
      const runtime = runtimeSays(pattern);
      if (runtime === 'size') continue;
      assert.equal(dialogSays(pattern), runtime, `pattern ${JSON.stringify(pattern)}: the runtime says ${String(runtime)}`);
    }
  });
});
