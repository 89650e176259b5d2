/**
 * README "Security": a configured secret becomes `***` wherever an instrument echoes it, and the start of a long error
 * body is "never cut inside a secret its request carried". Both looked for a secret's spellings one after another,
 * each search going on after the end of the last one found: two echoes that overlap (a secret whose end is also its
 * start, `x7kx7` in `x7kx7kx7`; `abab` in a run of `ab`) were found once, and the part of the second one past the
 * first went out as it is (`aba` in `ababa` left `***ba`), or a body cut inside the second one kept its start
 * (review92). Every spelling is now found wherever it starts, and all of them are taken out (one `***` where they
 * overlap).
 *
 * Seeded property over drawn secrets whose start repeats (LH_SEED replays, LH_CASES extends).
 */
import assert from 'node:assert/strict';

import { clipOutside, redactText } from '../../src/contract/redaction';
import { parseSeed, Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? parseSeed(process.env.LH_SEED) : Date.now() % 2 ** 32;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2000;

/** A secret from few signs, so its end is often also its start (`x7kx7`, `!a!a`), at least 3 long. */
function drawSecret(rng: Rng): string {
  const signs = rng.pick(['ab', 'x7k', 'a!', 'Q%', 'z9-']);
  let s = '';
  while (s.length < rng.int(3, 8)) s += rng.pick([...signs]);
  return s.length < 3 ? s.padEnd(3, signs[0]) : s;
}

/** A text of whole secrets, their starts and some other words, in a frame. */
function drawText(rng: Rng, secret: string): string {
  let t = '';
  const n = rng.int(2, 6);
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    t += r < 0.5 ? secret : r < 0.8 ? secret.slice(0, rng.int(1, secret.length - 1)) : rng.pick([' ', 'ok', '-', '\n']);
  }
  return `refused: ${t} (rule 4)`;
}

/** Every place the secret (as it is) starts in the text, overlapping ones too. */
function starts(text: string, secret: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(secret); i >= 0; i = text.indexOf(secret, i + 1)) at.push(i);
  return at;
}

/** What is left of the text when every place the secret covers is taken out (one `***` for those that overlap). */
function expected(text: string, secret: string): string {
  const spans: [number, number][] = [];
  for (const s of starts(text, secret)) {
    const last = spans[spans.length - 1];
    if (last !== undefined && s < last[1]) last[1] = s + secret.length;
    else spans.push([s, s + secret.length]);
  }
  let out = '';
  let from = 0;
  for (const [s, e] of spans) {
    out += `${text.slice(from, s)}***`;
    from = e;
  }
  return out + text.slice(from);
}

describe('review: overlapping echoes of one secret are all taken out, and no cut keeps one’s start (seeded)', function () {
  it(`redactText takes out every place a secret covers (seed ${SEED})`, function () {
    console.log(`      overlapping echoes seed: ${SEED} (LH_SEED=${SEED} replays it, LH_CASES=${CASES})`);
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const secret = drawSecret(rng);
      const text = drawText(rng, secret);
      const replay = `secret ${JSON.stringify(secret)} in ${JSON.stringify(text)} (seed ${SEED}, case ${i})`;
      assert.equal(redactText(text, [secret]), expected(text, secret), replay);
    }
  });

  it(`clipOutside never cuts inside any of them (seed ${SEED})`, function () {
    const rng = new Rng(SEED ^ 0x5bd1e995);
    for (let i = 0; i < CASES; i++) {
      const secret = drawSecret(rng);
      const text = drawText(rng, secret);
      const max = rng.int(1, text.length - 1);
      const cut = clipOutside(text, max, [secret]);
      const replay = `secret ${JSON.stringify(secret)} in ${JSON.stringify(text)} cut at ${max} (seed ${SEED}, case ${i})`;
      assert.ok(text.startsWith(cut) && cut.length <= max, `${replay}: ${JSON.stringify(cut)}`);
      for (const s of starts(text, secret))
        assert.ok(!(s < cut.length && s + secret.length > cut.length), `${replay}: ${JSON.stringify(cut)} cuts the one at ${s}`);
    }
  });

  it('the examples', function () {
    assert.equal(redactText('given ababa', ['aba']), 'given ***');
    assert.equal(redactText('x7kx7kx7 refused', ['x7kx7']), '*** refused');
    assert.equal(clipOutside('id x7kx7kx7 refused', 9, ['x7kx7']), 'id ');
    // a body that is one run of the secret is cut to nothing rather than to a piece of it
    assert.equal(clipOutside('hunter22 refused', 4, ['hunter22']), '');
  });
});
