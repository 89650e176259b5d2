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
/**
 * A shape may take this many times what an ordinary text of the same length takes, measured in the same run (the
 * machine is shared and noisy: an absolute time would fail on a busy one). Each is measured three times and the best
 * kept. A linear shape takes about 0.2 to 1.5 times the baseline; a scan per value took 8 times (the `\"` case) to
 * hundreds.
 */
const FACTOR = 4;

function fill(unit: string, length = MiB): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/** The process's CPU time, not the wall clock: a thread the busy machine left waiting is not counted (run 1eade92 of
 * the CI-like runs, load 15: 36 ms by the clock for a 64 KiB text whose ordinary twin took 3). */
function timed(text: string): { out: string; ms: number } {
  const t0 = process.cpuUsage();
  const out = redactText(text, []);
  const used = process.cpuUsage(t0);
  return { out, ms: (used.user + used.system) / 1000 };
}

/** The best of three runs (of seven for a short text, whose few milliseconds a collection of garbage can double). */
function best(text: string): number {
  redactText('warm: up', []);
  return Math.min(...Array.from({ length: text.length < MiB / 4 ? 7 : 3 }, () => timed(text).ms));
}

/** An ordinary text in which every rule finds values to take out: each one a linear scan. */
const ORDINARY = '{"user": "bob", "password": "x"} at 12:30 token=y&a=1 50 % password: z\n';
const baselines = new Map<number, number>();
function baseline(length: number): number {
  let ms = baselines.get(length);
  if (ms === undefined) baselines.set(length, (ms = best(fill(ORDINARY, length))));
  return ms;
}

describe('review: many secret-named colon values on one long line are redacted in linear time', function () {
  this.timeout(120_000);

  const shapes: [string, string][] = [
    ['kept values (token: null)', fill('token: null, ')],
    ['kept booleans (auth: false)', fill('auth: false; ')],
    ["quoted values (password: 'x')", fill("password: 'x', ")],
    ['quoted names ("password" :true)', fill('"password" :true,')],
    ['JSON-ish pairs ("password":")', fill('"password":"')],
    ['kept values, then a long run of blanks', `${fill('token: null ', MiB / 2)}${' '.repeat(MiB / 2)}\nend`],
    // review38: escaped quotes (a JSON name was read from each: 320 ms), and the shapes of the forms added then
    ['escaped quotes (\\")', fill('\\"')],
    ['escaped quotes and letters (\\"a)', fill('\\"a')],
    ['spaced = (password = null,)', fill('password = null, ')],
    ['spaced = without values (password =)', fill('password =')],
    ['arrows (password -> )', fill('password -> ')],
    ['Ruby arrows ("password"=>)', fill('"password"=>')],
    ['full-width colons (password：)', fill('password\uff1a')],
    ['no-break spaces after a name', fill('password\u00a0\u00a0')],
    ['escaped colons (password\\u003a)', fill('password\\u003a')],
    ['YAML names with empty values (password:\\n)', fill('password:\n')],
    ['YAML block headers (password: |\\n)', fill('password: |\n')],
    ['YAML sequences (tokens:\\n- )', fill('tokens:\n- ')],
    ['YAML names in escaped lines (password:\\\\n)', fill('password:\\n')],
    ['a YAML name, then blank lines', `password:\n${fill('  \n', MiB - 10)}`],
    [
      'YAML names indented less and less',
      Array.from({ length: 1400 }, (_, i) => `${' '.repeat(1400 - i)}password:`)
        .join('\n')
        .slice(0, MiB),
    ],
    ['encoded names (%3Fpassword%3D)', fill('%3Fpassword%3D')],
    ['encoded values of encoded ampersands', `password%3D${fill('%2526', MiB - 11)}`],
    ['escapes before names (a%41)', fill('a%41')],
    ['names too long before %3D', fill(`${'a'.repeat(129)}%3D`)],
    ['Gson names (\\u0026password\\u003d)', fill('\\u0026password\\u003d')],
  ];
  for (const [name, text] of shapes) {
    it(`1 MiB of ${name} in under ${FACTOR} times an ordinary 1 MiB`, function () {
      const base = baseline(text.length);
      const ms = best(text);
      assert.ok(ms < FACTOR * base, `${ms.toFixed(0)} ms for 1 MiB of ${name}, ${base.toFixed(0)} ms for an ordinary text`);
    });
  }

  it('64 KiB of JSON strings ending in an empty YAML value (read as JSON) in linear time', function () {
    for (const unit of ['{"a":"password:"},', '{"a":"password:\\n"},', '"tokens:\\n- ",']) {
      const text = `[${unit.repeat(Math.floor(65000 / unit.length))}""]`; // a JSON text: its strings are read, each value ends with its string
      const base = baseline(text.length);
      const ms = best(text);
      // a few ms either way: 25 ms at least (a scan per value to the text's end took seconds)
      assert.ok(ms < Math.max(FACTOR * base, 25), `${ms.toFixed(1)} ms for ${unit}, ${base.toFixed(1)} ms for an ordinary text`);
    }
  });

  it('util.inspect of 40,000 records on one line: every password gone, quickly', function () {
    const records = Array.from({ length: 40_000 }, (_, i) => ({ user: `u${i}`, password: `Ψsecret${i}Ψ` }));
    // as util.inspect writes an array of records on one line (it breaks a long array into columns, a log line does not)
    const text = `[ ${records.map((r) => inspect(r, { breakLength: Infinity })).join(', ')} ]`;
    assert.ok(text.length > MiB && !text.includes('\n'));
    const base = baseline(text.length);
    const { out, ms } = timed(text);
    assert.ok(!out.includes('Ψ'), 'a password is left');
    assert.ok(out.includes("user: 'u39999'"), 'an ordinary field was taken out');
    assert.ok(
      ms < FACTOR * base,
      `${ms.toFixed(0)} ms for ${text.length} characters, ${base.toFixed(0)} ms for an ordinary text`,
    );
  });
});
