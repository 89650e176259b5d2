/**
 * README, Security: the values of secret-named fields, "in objects, JSON text and name=value forms", are taken out:
 * "text, numbers (a PIN) and objects become ***", while "a boolean, null or '' under a secret name is kept". In JSON
 * text (an instrument's error body echoed into msg.error, a log line) an object or an array under a secret name was
 * kept whole, `{"credentials":{"user":"admin","value":"hunter2"}}` as it was, and `"token":""` became `"***"`.
 * The text form now agrees with the object form (redactValue), on generated JSON of any shape and spacing.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { REDACTED, redactText, redactValue } from '../../src/contract/redaction';

const MARK = 'Zq7Mark';
/** A JSON value that holds the mark somewhere (a string, a key's value, deep in an array). */
const holding: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(`${MARK}1`),
    fc.string().map((s) => `${s}${MARK}2"}]{[\\`),
    fc.tuple(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), tie('value')).map(([a, v]) => [...a, v]),
    fc
      .tuple(fc.dictionary(fc.constantFrom('user', 'value', 'data', 'scheme'), fc.jsonValue({ maxDepth: 2 })), tie('value'))
      .map(([d, v]) => ({ ...d, inner: v })),
  ),
})).value;
const secretName = fc.constantFrom('credentials', 'auth', 'token', 'clientSecret', 'X-Api-Key', 'pin', 'session');
const plainName = fc.constantFrom('id', 'message', 'list', 'tokenType', 'author', 'errorKey');

describe('review: an object under a secret name in JSON text is taken out, as in an object', function () {
  it('whatever the value holds and however the JSON is spaced: no trace of it, the rest kept and still JSON', function () {
    fc.assert(
      fc.property(
        secretName,
        fc.oneof(
          holding.filter((v) => typeof v === 'object'),
          holding,
        ),
        plainName,
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(undefined, 2),
        (name, secret, other, kept, indent) => {
          const body = { before: 1, [name]: secret, [other]: kept };
          const text = JSON.stringify(body, null, indent);
          fc.pre(!text.includes('__proto__')); // JSON.parse makes it a prototype, not a key: no comparison
          const out = redactText(`error 500: ${text} (while answering)`);
          assert.doesNotMatch(out, new RegExp(MARK), out);
          const json = out.slice('error 500: '.length, out.length - ' (while answering)'.length);
          assert.deepEqual(JSON.parse(json), redactValue(body), 'the text says what the object form says');
        },
      ),
      { numRuns: 600, seed: 31 },
    );
  });

  it('a body cut short inside the secret object: taken out to the end', function () {
    const out = redactText('{"id":7,"credentials":{"user":"admin","value":"hunt');
    assert.equal(out, `{"id":7,"credentials":"${REDACTED}"`);
  });

  it("'' , booleans and null under a secret name are kept in text as in objects", function () {
    const body = { token: '', pin: null, password: true, id: 3 };
    assert.deepEqual(JSON.parse(redactText(JSON.stringify(body))), redactValue(body));
    assert.deepEqual(redactValue(body), body);
  });
});
