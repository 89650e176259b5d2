/**
 * README "Security": every configured secret becomes `***` in every text leaving the package, and every input is
 * bounded. Since review92 a secret that starts with what it ends with (`s3cret-pass`, `x7kx7kx7`, `aaaaaaaa`) is
 * searched at every start position, so that two overlapping echoes are both taken out. Realistic secrets (8 to 64
 * characters, many with such a border) over realistic bodies (an HTML error page, JSON full of escapes, long runs of
 * one letter, a run of echoes) must cost time linear in the body: measured at 32 and 128 KiB, the larger within
 * 6 times the smaller (linear: 4; a search that copies or rescans the text per echo: 16 and more).
 */
import assert from 'node:assert/strict';

import { clipOutside, redactText } from '../../src/contract/redaction';
import { cpuMs } from '../support/cpu-time';

const SECRETS = ['s3cret-pass', 'x7kx7kx7', 'a'.repeat(16), 'abcdefgh'.repeat(8), 'P@ss w0rd P@ss', 'ab ab ab ab ab'];

const BODIES: [string, (secret: string, size: number) => string][] = [
  [
    'an HTML error page',
    (s, size) =>
      `<html><body><p>Login for admin with ${s} refused &nbsp;&amp; try again</p>\n    <div class="e">  </div>\n`
        .repeat(size / 80)
        .slice(0, size),
  ],
  ['JSON with many escapes', (_s, size) => JSON.stringify({ m: '\\"\u00e4\n\t%u00e4'.repeat(size / 12) }).slice(0, size)],
  ['a run of one letter', (s, size) => s[0].repeat(size)],
  ['a run of echoes', (s, size) => s.repeat(Math.ceil(size / s.length)).slice(0, size)],
  ['a run of wrapped echoes', (s, size) => `${s.replace(/ /g, '\n  ')} `.repeat(Math.ceil(size / s.length)).slice(0, size)],
];

describe('review: redaction of secrets whose echoes can overlap costs time linear in the body', function () {
  this.timeout(15000);

  for (const [name, bodyOf] of BODIES) {
    it(`${name}: 32 and 128 KiB, every secret`, function () {
      for (const secret of SECRETS) {
        const [small, large] = [bodyOf(secret, 32 * 1024), bodyOf(secret, 128 * 1024)];
        redactText(small.slice(0, 200), [secret]); // the pattern made and compiled
        const least = (text: string): number =>
          Math.min(
            ...[0, 1, 2].map(() => cpuMs(() => (redactText(text, [secret]), clipOutside(text, text.length / 2, [secret])))),
          );
        const [a, b] = [least(small), least(large)];
        const said = `${JSON.stringify(secret)}: ${a.toFixed(1)} ms for 32 KiB, ${b.toFixed(1)} ms for 128 KiB`;
        if (process.env.LH_SHOW) console.log(`      ${name}: ${said}`);
        assert.ok(b < 6 * Math.max(a, 4), `not linear: ${said}`);
        assert.ok(b < 1500, `too slow: ${said}`);
        if (name === 'a run of echoes') assert.ok(!redactText(large, [secret]).includes(secret), `${said}: an echo left`);
      }
    });
  }
});
