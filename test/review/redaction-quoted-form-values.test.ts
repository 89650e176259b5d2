/**
 * README "Security": the values of secret-named fields in `name=value` forms become `***`, whatever the name's case and
 * separators. A quoted value (`smtpPassword="s3cret"`, `token='abc'`, as log lines, connection strings and
 * `.env`-style echoes write them) was kept whole: the value pattern stopped at the opening quote and matched nothing.
 * Property over the repo's seeded PRNG: every secret-named field, quoted either way, with spaces and `&` inside, loses
 * its value; the quotes and the text around stay; an ordinary name keeps its value.
 */
import assert from 'node:assert/strict';

import { redactText } from '../../src/contract/redaction';
import { Rng } from '../support/prng';

const SECRET_NAMES = ['password', 'smtpPassword', 'SMTP_PASSWORD', 'api_key', 'X-Api-Key', 'clientSecret', 'adminPin', 'token'];
const PLAIN_NAMES = ['user', 'tokenType', 'passwordExpires', 'instrumentKey', 'author'];
const VALUE_CHARS = 'abcXYZ0189 &=;:,.!#$%-_/';

function valueOf(rng: Rng): string {
  let v = '';
  const n = rng.int(3, 16);
  for (let i = 0; i < n; i++) v += rng.pick([...VALUE_CHARS]);
  // a value that starts with a letter, so the check below finds it in the text
  return `v${v}Q`;
}

describe('redaction: quoted values of secret-named fields (name="value", name=\'value\')', function () {
  it('takes out the value between the quotes, whatever the name spelling, over 2,000 seeded texts', function () {
    const rng = new Rng(20_2026);
    for (let run = 0; run < 2000; run++) {
      const name = rng.pick(SECRET_NAMES);
      const quote = rng.pick(['"', "'"]);
      const value = valueOf(rng);
      const text = `${rng.pick(['login failed: ', 'cfg ', ''])}${name}=${quote}${value}${quote}${rng.pick(['', ' host=h', '&x=1'])}`;
      const out = redactText(text);
      assert.ok(!out.includes(value), `run ${run}: ${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
      assert.ok(out.includes(`${name}=${quote}***${quote}`), `run ${run}: ${JSON.stringify(out)}`);
    }
  });

  it('keeps the quoted value of an ordinary name, and an empty quoted secret', function () {
    for (const name of PLAIN_NAMES) assert.equal(redactText(`${name}="kept value"`), `${name}="kept value"`);
    assert.equal(redactText('password="" user="a"'), 'password="" user="a"');
    assert.equal(redactText('password=plain&x=1'), 'password=***&x=1');
  });
});
