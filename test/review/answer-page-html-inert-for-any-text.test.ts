/**
 * The answer page's HTML over a class of cases (seeded): whatever the instrument, the flow or a person writes into
 * any text of the page (error title, message, severity, instrument name, error id, times, action and response labels,
 * input labels, hints and suggested values, item labels and their responses, a refusal's reason, a name), the markup
 * is the same as with plain words: the same elements with the same attributes in the same order. So no text can add
 * an element, an attribute (an event handler), or leave an attribute value. LH_SEED replays a run, LH_CASES extends it.
 */
import assert from 'node:assert/strict';

import {
  type ErrorView,
  type OutcomeKind,
  outcomePage,
  type OutcomeView,
  questionPage,
} from '../../src/nodes/lh-answer-page/page-html';
import { Rng } from '../support/prng';

const PIECES = [
  '<',
  '>',
  '"',
  "'",
  '`',
  '=',
  '&',
  '&lt;',
  '&#60;',
  '/',
  ' ',
  '\n',
  '\u0000',
  '\u2028',
  'script',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '" onmouseover="alert(1)',
  "' autofocus onfocus='alert(1)",
  '</textarea>',
  '<!--',
  ']]>',
  '<svg/onload=alert(1)>',
  'javascript:alert(1)',
  '{{7*7}}',
  'Ä',
  '😀',
  '\ud800',
];

function hostile(rng: Rng): string {
  let s = '';
  const n = rng.int(0, 6);
  for (let i = 0; i < n; i++) s += rng.pick(PIECES);
  return s;
}

/** The markup without its texts: each tag with its attribute names, in order (attribute values dropped). */
function skeleton(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<\/?([A-Za-z][\w-]*)((?:\s+[^\s=>]+(?:="[^"]*")?)*)\s*\/?>/g)) {
    const attrs = [...m[2].matchAll(/\s+([^\s=>]+)(?:="[^"]*")?/g)].map((a) => a[1]);
    out.push(`${m[0].startsWith('</') ? '/' : ''}${m[1]}[${attrs.join(',')}]`);
  }
  // every `<` of the page starts one of those tags (a stray one would be text the parser reads as markup)
  assert.equal((html.match(/</g) ?? []).length, out.length + (html.startsWith('<!DOCTYPE') ? 1 : 0), html);
  return out;
}

function errorView(text: () => string, rng: Rng, source: 'A' | 'B'): ErrorView {
  const options = Array.from({ length: rng.int(0, 3) }, (_, i) => ({
    value: text(),
    label: text(),
    isDefault: i === 0,
    ...(source === 'B' && i === 1
      ? {
          inputs: [
            {
              id: 1,
              label: text(),
              kind: 'number' as const,
              min: 0,
              max: 10,
              step: text(),
              value: text(),
              hint: text(),
              required: true,
            },
            { id: 2, label: text(), kind: 'text' as const, value: text(), hiddenValue: false, hint: text(), required: false },
          ],
        }
      : {}),
  }));
  return {
    instrument: text(),
    source,
    errorKey: text(),
    title: text(),
    message: text() || 'm',
    severity: text(),
    time: text(),
    options,
    items: source === 'A' ? [{ id: text(), label: text(), options: [text(), text()] }] : [],
    runScope: true,
    expires: text(),
    photo: { raised: true, takenAt: text() || 't', fresh: true, nonce: 5 },
  };
}

const KINDS: OutcomeKind[] = [
  'answered',
  'already-answered',
  'not-pending',
  'refused',
  'failed',
  'form-used',
  'forms-full',
  'changed',
  'ambiguous',
  'invalid',
];

function outcomeView(text: () => string, kind: OutcomeKind): OutcomeView {
  return {
    kind,
    instrument: text(),
    errorKey: text(),
    title: text(),
    answer: text() || 'a',
    by: text() || 'b',
    at: text() || 't',
    reason: text() || 'r',
    unconfirmed: kind === 'failed',
    runScope: true,
  };
}

describe('review: the answer page markup is the same whatever its texts say (seeded)', function () {
  const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
  const cases = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

  it(`question and outcome pages (seed ${seed})`, function () {
    console.log(`      page markup seed: ${seed} (LH_SEED=${seed} replays it)`);
    for (let i = 0; i < cases; i++) {
      const rng = new Rng(seed + i);
      const source = rng.chance(0.5) ? 'A' : 'B';
      // the link token is a verified one (base64url parts) by the time a page shows it: no lone surrogate in it
      const token = hostile(rng).replace(/\ud800/g, '');
      const kind = rng.pick(KINDS);
      // the same draws twice: once with hostile texts, once with each text replaced by a plain word
      const hostileRng = new Rng(seed * 31 + i);
      const plainRng = new Rng(seed * 31 + i);
      const hostileText = (): string => hostile(hostileRng) || 'x';
      const plainText = (): string => (hostile(plainRng), 'x');
      const viewHostile = errorView(hostileText, new Rng(seed + i + 1), source);
      const viewPlain = errorView(plainText, new Rng(seed + i + 1), source);
      assert.deepEqual(
        skeleton(questionPage(viewHostile, token, hostile(rng), hostile(rng))),
        skeleton(questionPage(viewPlain, 'x', 'x', 'x')),
        `case ${i}: ${JSON.stringify(viewHostile).slice(0, 400)}`,
      );
      const outHostile = new Rng(seed * 7 + i);
      const outPlain = new Rng(seed * 7 + i);
      assert.deepEqual(
        skeleton(outcomePage(outcomeView(() => hostile(outHostile) || 'x', kind))),
        skeleton(outcomePage(outcomeView(() => (hostile(outPlain), 'x'), kind))),
        `case ${i} (${kind})`,
      );
    }
  });
});
