/**
 * README "Security": one redaction step guards every text that leaves a node and every audit record, and an
 * instrument's answer it reads can be 1 MiB. It runs on the Node-RED thread, so while it runs no instrument is polled.
 *
 * The colon form (review32) looked for the end of each secret-named value's line from the value on: a value that is
 * kept (`token: null`, `auth: false`) or quoted (`password: 'x'`, util.inspect's `{ password: 'x' }`, Python's repr)
 * does not end at its line's end, so the next one on the same line read that line again. A 1 MiB line of such values
 * (util.inspect of an array of records, a JSON text without line breaks) took 11 to 26 s, the event loop stalled.
 * The line's end is now found once per line: the same texts take milliseconds, and every value is still taken out.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';

import { redactText } from '../../src/contract/redaction';

const MiB = 1 << 20;
/** Far above the milliseconds the step takes on 1 MiB, far below the seconds a scan per value took. */
const BOUND_MS = 1000;

function fill(unit: string, length = MiB): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function timed(text: string): { out: string; ms: number } {
  const t0 = process.hrtime.bigint();
  const out = redactText(text, []);
  return { out, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

describe('review: many secret-named colon values on one long line are redacted in linear time', function () {
  this.timeout(60_000);

  const shapes: [string, string][] = [
    ['kept values (token: null)', fill('token: null, ')],
    ['kept booleans (auth: false)', fill('auth: false; ')],
    ["quoted values (password: 'x')", fill("password: 'x', ")],
    ['quoted names ("password" :true)', fill('"password" :true,')],
    ['JSON-ish pairs ("password":")', fill('"password":"')],
    ['kept values, then a long run of blanks', `${fill('token: null ', MiB / 2)}${' '.repeat(MiB / 2)}\nend`],
  ];
  for (const [name, text] of shapes) {
    it(`1 MiB of ${name} in under ${BOUND_MS} ms`, function () {
      redactText('warm: up', []);
      const { ms } = timed(text);
      assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for 1 MiB of ${name}`);
    });
  }

  it('util.inspect of 40,000 records on one line: every password gone, quickly', function () {
    const records = Array.from({ length: 40_000 }, (_, i) => ({ user: `u${i}`, password: `Ψsecret${i}Ψ` }));
    // as util.inspect writes an array of records on one line (it breaks a long array into columns, a log line does not)
    const text = `[ ${records.map((r) => inspect(r, { breakLength: Infinity })).join(', ')} ]`;
    assert.ok(text.length > MiB && !text.includes('\n'));
    const { out, ms } = timed(text);
    assert.ok(!out.includes('Ψ'), 'a password is left');
    assert.ok(out.includes("user: 'u39999'"), 'an ordinary field was taken out');
    assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for ${text.length} characters`);
  });
});
