/**
 * README, Security / Several Node-REDs: "a URL with a password in it is refused (`lh-coordination url: no user name
 * or password in the URL`)", and no secret reaches a message, a status or the log. A password typed into the URL
 * with a character a URL cannot carry unencoded (`/`, `,`, a space, `#`, `?`: common in generated passwords) made the
 * URL unparseable, and the "is not a URL" message echoed it, password and all (the mask stopped at the first `/`; a
 * `,` or a space split the field into two "URLs", each echoed). One with a `/` right after the colon even parsed
 * (`rediss://default:/pw@host`: host `default`, the password in the path) and was accepted, password in flows.json;
 * the editor marked it valid too.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { CoordinationConfigError, coordinationSettings } from '../../src/coordination/config';
import { redact } from '../../src/nodes/shared/redaction';
import { editorDefinition } from '../support/editor-definition';

/** Password characters: letters found in no message of the config check, and the characters a URL cannot carry. */
const PASSWORD_LETTERS = 'QXZJKW';
const password = fc
  .array(fc.constantFrom(...`${PASSWORD_LETTERS}/+=,# ?@:%`.split('')), { minLength: 4, maxLength: 16 })
  .map((chars) => chars.join(''))
  .filter((pw) => /[QXZJKW]/.test(pw));

describe('review: lh-coordination never echoes a password typed into its URL', function () {
  const validate = editorDefinition('lh-coordination').defaults.url.validate;
  const urlValid = (url: string, mode = 'single'): unknown => validate?.call({ mode }, url);

  it('the editor accepts the URLs the runtime accepts', function () {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://redis.lab:6380/2']) assert.equal(urlValid(url), true, url);
    // several URLs: the addresses of sentinels (one Redis server takes one URL, in the node as in the dialog)
    assert.equal(urlValid('redis://a:26379, redis://b:26379', 'sentinel'), true);
  });

  it('whatever the password, the URL is refused naming the field, and no character of the password is shown', function () {
    fc.assert(
      fc.property(
        password,
        fc.constantFrom('redis://:', 'redis://user:', 'rediss://default:'),
        fc.constantFrom('127.0.0.1:6379', 'redis.lab:6380/2', '[::1]:6379'),
        fc.constantFrom('single', 'sentinel', 'cluster'),
        (pw, head, tail, mode) => {
          let thrown: unknown;
          try {
            coordinationSettings({ url: `${head}${pw}@${tail}`, mode, sentinelName: 'm' });
          } catch (err) {
            thrown = err;
          }
          assert.ok(thrown instanceof CoordinationConfigError, `refused: ${head}${pw}@${tail}`);
          assert.equal(thrown.field, 'url');
          // what the log, the status and Catch nodes get is the redacted message
          for (const text of [thrown.message, redact(thrown.message)])
            assert.doesNotMatch(text, /[QXZJKW]/, `password shown in: ${text}`);
          // the editor marks the field invalid before deploy (the built html, as Node-RED serves it)
          assert.notEqual(urlValid(`${head}${pw}@${tail}`), true, `editor accepts ${head}${pw}@${tail}`);
        },
      ),
      { numRuns: 2000, seed: 31 },
    );
  });

  it('a base64 password with a slash: refused, the password in no message', function () {
    assert.throws(
      () => coordinationSettings({ url: 'redis://:Ab3K+/9xKq=@127.0.0.1:6379' }),
      (err: Error) => /^lh-coordination url: /.test(err.message) && !/9xKq|Ab3K/.test(err.message),
    );
  });

  it('a URL with no @ is still shown when it does not parse (the typo is easy to find)', function () {
    assert.throws(
      () => coordinationSettings({ url: 'redis://127.0.0.1:6379x' }),
      /lh-coordination url: "redis:\/\/127\.0\.0\.1:6379x" is not a URL/,
    );
  });
});
