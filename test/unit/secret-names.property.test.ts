/**
 * Issue 29.4: redaction by name patterns. A field whose name says it holds a secret (password, secret, token, key, pin,
 * passphrase, credential, auth, cookie, session, private…, in any case and with any separator: `smtpPassword`,
 * `api_key`, `clientSecret`, `adminPin`, `X-Api-Key`) is written as `***` in audit records, msg.error and logs; a
 * field that only talks about a secret (`passwordExpires`, `minimumPasswordLength`, `tokenType`) or merely contains
 * the letters (`monkey`, `keyword`, `hideKeyboard`, `spinner`) keeps its value, and so do the instrument's own fields
 * a record needs (`clientKey`, `errorHandlingKey`, `stepType`, `selectedResponse`…).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { AuditRecord, AuditTrail, RecordFields } from '../../src/audit';
import { SOFTWARE_SETTING_FIELDS } from '../../src/contract/instrument-contract';
import { isSecretName, REDACTED, redactText, redactValue } from '../../src/contract/redaction';

/** Words that name a secret when a name ends with them. */
const SECRET_WORDS = [
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'passcode',
  'secret',
  'token',
  'key',
  'apiKey',
  'pin',
  'credential',
  'credentials',
  'creds',
  'auth',
  'authorization',
  'cookie',
  'session',
  'private',
  'privateKey',
  'bearer',
];
/** Words put in front of a secret word (none of them makes a key an identifier). */
const PREFIXES = ['smtp', 'admin', 'api', 'client', 'x', 'db', 'user', 'refresh', 'access', 'master', 'old', 'new', 'mqtt'];
/** Words after a secret word that still carry the secret itself. */
const CARRIERS = ['', 'value', 'hash', 'code', 'data', 'header', 'string', 'confirm'];
/** Words after a secret word that make the name about the secret, not the secret. */
const ABOUT = [
  'expires',
  'length',
  'type',
  'count',
  'timeout',
  'enabled',
  'policy',
  'required',
  'notification',
  'lifetimeSeconds',
];
/** Names the instrument and the package use that a record must keep. */
const KEEP = [
  ...Object.keys(SOFTWARE_SETTING_FIELDS),
  'maximumLoginAttempts',
  'lockTimeout',
  'passwordExpires',
  'passwordExpiresNotification',
  'minimumPasswordLength',
  'passwordExpiresInDays',
  'notifyPasswordExpiresSoon',
  'tokenLifetimeSeconds',
  'rejectUnauthorized',
  'enableUserManagement',
  'clientKey',
  'errorHandlingKey',
  'errorKey',
  'instrumentKey',
  'stepType',
  'keyword',
  'keyboard',
  'monkey',
  'turkey',
  'spinner',
  'pinned',
  'pipeline',
  'author',
  'authority',
  'secretary',
  'bypass',
  'compass',
  'passage',
  'selectedResponse',
  'selectedActionId',
  'groupId',
  'uuid',
  'id',
  'title',
  'severity',
  'errorData',
  'inputs',
  'statusCode',
  'errorCode',
  'barcode',
  'pinDepth',
  'tokenType',
  'keyFile',
];

type Style = 'camel' | 'pascal' | 'snake' | 'kebab' | 'screaming' | 'dotted' | 'header' | 'spaced';
const STYLES: Style[] = ['camel', 'pascal', 'snake', 'kebab', 'screaming', 'dotted', 'header', 'spaced'];

function splitCamel(word: string): string[] {
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(' ')
    .filter(Boolean);
}

/** The words written in one naming style. */
function styled(words: string[], style: Style): string {
  const parts = words.flatMap(splitCamel).map((w) => w.toLowerCase());
  const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);
  switch (style) {
    case 'camel':
      return parts.map((w, i) => (i === 0 ? w : cap(w))).join('');
    case 'pascal':
      return parts.map(cap).join('');
    case 'snake':
      return parts.join('_');
    case 'kebab':
      return parts.join('-');
    case 'screaming':
      return parts.join('_').toUpperCase();
    case 'dotted':
      return parts.join('.');
    case 'header':
      return parts.map(cap).join('-');
    case 'spaced':
      return parts.join(' ');
  }
}

const secretName = fc
  .tuple(
    fc.array(fc.constantFrom(...PREFIXES), { maxLength: 2 }),
    fc.constantFrom(...SECRET_WORDS),
    fc.constantFrom(...CARRIERS),
    fc.constantFrom(...STYLES),
  )
  // an identifier key (clientKey, the B error-handler key) is not a secret: see the decision in redaction.ts
  .filter(([prefixes, word]) => !(word === 'key' && prefixes[prefixes.length - 1] === 'client'))
  .map(([prefixes, word, carrier, style]) => styled([...prefixes, word, ...(carrier ? [carrier] : [])], style));

const aboutName = fc
  .tuple(
    fc.array(fc.constantFrom(...PREFIXES), { maxLength: 1 }),
    fc.constantFrom('password', 'token', 'secret', 'pin', 'session', 'auth', 'passphrase', 'credential'),
    fc.constantFrom(...ABOUT),
    fc.constantFrom(...STYLES),
  )
  .map(([prefixes, word, about, style]) => styled([...prefixes, word, about], style));

const secretValue = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== ''),
  fc.integer({ min: 0, max: 999999 }),
);

describe('redaction by name (issue 29.4)', function () {
  it('the names of the issue', function () {
    for (const name of ['smtpPassword', 'apiToken', 'clientSecret', 'passphrase', 'api_key', 'adminPin', 'X-Api-Key'])
      assert.equal(isSecretName(name), true, name);
  });

  it('a generated secret name, in any style, is redacted with its value never left in the record', function () {
    fc.assert(
      fc.property(secretName, secretValue, (name, value) => {
        assert.equal(isSecretName(name), true, name);
        const out = redactValue({ body: { [name]: value, note: 'kept' } });
        assert.deepEqual(out, { body: { [name]: REDACTED, note: 'kept' } });
        // in JSON text too (an error body echoed in a message)
        if (typeof value === 'string' && /^[A-Za-z0-9._~-]+$/.test(value)) {
          const text = redactText(`refused: ${JSON.stringify({ [name]: value, note: 'kept' })}`);
          assert.ok(!text.includes(`${JSON.stringify(name)}:"${value}"`), `${name}: ${text}`);
          assert.ok(text.includes(`${JSON.stringify(name)}:"${REDACTED}"`), `${name}: ${text}`);
          assert.ok(text.includes('"note":"kept"'), text);
        }
      }),
      { numRuns: 2000, seed: 2904 },
    );
  });

  it('a name about a secret (expiry, length, type…) keeps its value', function () {
    fc.assert(
      fc.property(aboutName, (name) => {
        assert.equal(isSecretName(name), false, name);
      }),
      { numRuns: 1000, seed: 2904 },
    );
  });

  it('the fields a record needs and words that merely contain the letters keep their values', function () {
    for (const base of KEEP) {
      for (const style of STYLES) {
        const name = style === 'camel' ? base : styled([base], style);
        assert.equal(isSecretName(name), false, `${base} as ${style}: ${name}`);
      }
    }
    const settings = { hideKeyboard: true, defaultAmbientTemperature: 21, passwordExpires: 90, clientKey: 'NodeRed1' };
    assert.deepEqual(redactValue(settings), settings);
  });

  it('a boolean or an empty value under a secret name stays (it holds no secret)', function () {
    assert.deepEqual(redactValue({ useAuth: false, password: '', token: null }), { useAuth: false, password: '', token: null });
  });

  it('a secret name in a query string or form body', function () {
    assert.equal(redactText('?user=a&smtp_password=hunter2&x=1'), '?user=a&smtp_password=***&x=1');
    assert.equal(redactText('api-key=abc123 next'), 'api-key=*** next');
    assert.equal(redactText('keyword=liquid'), 'keyword=liquid');
  });

  it('an audit record of a settings body keeps the settings and none of the secrets (the issue’s names)', async function () {
    const written: RecordFields[] = [];
    const log = {
      append: async (fields: RecordFields) => {
        written.push(fields);
        return fields as AuditRecord;
      },
      close: async () => undefined,
      on: () => undefined,
    };
    const trail = new AuditTrail(log, { instrument: 'i' });
    const body = {
      hideKeyboard: true,
      defaultAmbientTemperature: 21,
      smtpPassword: 'pw-1',
      apiToken: 'tok-2',
      clientSecret: 'sec-3',
      passphrase: 'phrase-4',
      api_key: 'key-5',
      adminPin: 1234,
      clientKey: 'NodeRed1',
    };
    await trail.intent({ api: 'A', method: 'PUT', path: '/settings', operation: 'set-software-settings', body }).durable;
    const text = JSON.stringify(written);
    for (const secret of ['pw-1', 'tok-2', 'sec-3', 'phrase-4', 'key-5', '1234']) assert.ok(!text.includes(secret), secret);
    const recorded = (written[0] as { what: { body: Record<string, unknown> } }).what.body;
    assert.deepEqual(
      { hideKeyboard: recorded.hideKeyboard, t: recorded.defaultAmbientTemperature, clientKey: recorded.clientKey },
      { hideKeyboard: true, t: 21, clientKey: 'NodeRed1' },
    );
  });
});
