/**
 * The one redaction step every text leaving the package passes (audit records, msg.error, status, logs): the secrets
 * given, bearer tokens, JWTs, URL userinfo and the values of secret-named fields become `***`. Pure (the secrets are
 * passed in), and a room of its own below the audit trail and the nodes, which both use it (the nodes' list of the
 * secrets configured in this Node-RED is src/nodes/shared/redaction.ts).
 *
 * What names a secret (isSecretName) is decided on the words of a name, whatever its case and separators
 * (`smtpPassword`, `SMTP_PASSWORD`, `smtp-password`, `X-Api-Key`, `apikey`): a name is secret when its last word is a
 * secret word (password, passwd, pwd, pass, passphrase, passcode, secret, token, credential(s), creds, pin, auth,
 * authorization, cookie, session, private, bearer, jwt, otp, mfa, apikey, privatekey, and key), after words that only
 * carry the secret (value, hash, code, data, header, string, confirm…) are set aside. So `passwordHash`, `pinCode`,
 * `authHeader` are secret; `passwordExpires`, `minimumPasswordLength`, `tokenType`, `pinDepth` (a pin tool) are not:
 * they talk about a secret. Words are whole words, so `monkey`, `keyword`, `hideKeyboard`, `spinner`, `author` are
 * not. A name written as one word with no case change is secret when it ends in a long secret word (`smtppassword`,
 * `accesstoken`; not the short ones: `adminpin` is not recognised, `adminPin` and `admin_pin` are).
 *
 * `key` is secret (`apiKey`, `privateKey`, `key`) unless the word before it makes it an identifier: `clientKey` and
 * `errorHandlingKey` (the B error-handler key, a config property kept in flows.json by design and needed in a
 * record), `errorKey`, `instrumentKey`, `sortKey`… A field whose value is a boolean, null or '' is kept (it holds no
 * secret: `useAuth: false`); any other value under a secret name (text, number: a PIN, object, array) is `***`.
 */

export const REDACTED = '***';

/** Secrets shorter than this are not searched for in free text (they would blank out ordinary words). */
const MIN_SECRET_LENGTH = 3;
const MAX_DEPTH = 12;

/** The last word of a name that makes it a secret. */
const SECRET_HEADS = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'passcode',
  'secret',
  'token',
  'credential',
  'credentials',
  'creds',
  'cred',
  'pin',
  'auth',
  'authorization',
  'cookie',
  'session',
  'private',
  'bearer',
  'jwt',
  'otp',
  'totp',
  'mfa',
  'apikey',
  'privatekey',
  'sessionid',
  'accesstoken',
  'refreshtoken',
  'clientsecret',
]);
/** Plurals of secret heads. */
const PLURAL_HEADS: Record<string, string> = {
  passwords: 'password',
  tokens: 'token',
  secrets: 'secret',
  cookies: 'cookie',
  keys: 'key',
  apikeys: 'apikey',
  passphrases: 'passphrase',
  passcodes: 'passcode',
};
/** A name written as one word without case change: secret when it ends in one of these (long enough to be safe). */
const SECRET_SUFFIXES = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'secret',
  'token',
  'credential',
  'credentials',
  'apikey',
  'privatekey',
  'cookie',
  'sessionid',
  'authorization',
];
/** Words after a secret word that still name the secret itself (its value, its hash, a copy typed again…). */
const CARRIERS = new Set([
  'value',
  'values',
  'val',
  'header',
  'headers',
  'hdr',
  'string',
  'str',
  'text',
  'data',
  'hash',
  'hashed',
  'digest',
  'salt',
  'code',
  'b64',
  'base64',
  'hex',
  'bytes',
  'raw',
  'plain',
  'plaintext',
  'cleartext',
  'encrypted',
  'enc',
  'cipher',
  'ciphertext',
  'content',
  'contents',
  'input',
  'field',
  'confirm',
  'confirmation',
  'repeat',
  'again',
  'retype',
  'verify',
  'new',
  'old',
  'current',
]);
/** Two words that name a secret together though neither does alone. */
const SECRET_PAIRS = new Set(['session id', 'access code', 'security answer', 'recovery code']);
/** The word before `key` that makes it an identifier, not a secret (`clientKey` is the B error-handler key). */
const IDENTIFIER_KEYS = new Set([
  'client',
  'handler',
  'handling',
  'error',
  'instrument',
  'record',
  'sort',
  'primary',
  'foreign',
  'partition',
  'range',
  'row',
  'lookup',
  'cache',
  'map',
  'group',
  'step',
  'protocol',
  'setting',
  'settings',
  'object',
  'property',
  'column',
  'index',
  'message',
  'translation',
  'label',
  'hot',
  'short',
  'idempotency',
  'dedupe',
  'dedup',
  'unique',
  'composite',
  'routing',
  'shard',
  'page',
  'cursor',
  'event',
  'topic',
  'store',
  'context',
  'storage',
  'answer',
  'link',
  'form',
  'watch',
  'ledger',
  'stream',
  'locale',
  'i18n',
  'field',
]);

/**
 * The words of a name: split at separators and at case changes (`caseWords`), lower case, trailing digits dropped
 * (`auth2`).
 */
function wordsOf(name: string, caseWords: boolean): string[] {
  const text = caseWords ? name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2') : name;
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase().replace(/(?<=[a-z])\d+$/, ''));
}

/**
 * A name is read twice: its words split at case changes (`smtpPassword`: smtp, password), and split at separators
 * only (`PassWord`, `pAsSwOrD`, `X-aPi-KeY`: a name typed or echoed in an odd letter case, whose case changes are no
 * words); either reading naming a secret makes it secret. The second reading only adds names whose case-split last
 * word is a piece of a secret word (`PASSword` read as `pas sword`): `passwordExpires` read flat is `passwordexpires`,
 * still about a secret.
 */
function decideSecretName(name: string): boolean {
  const cut = name.length > 256 ? name.slice(-256) : name;
  return decideSecretWords(wordsOf(cut, true)) || decideSecretWords(wordsOf(cut, false));
}

function decideSecretWords(words: string[]): boolean {
  while (words.length > 1 && CARRIERS.has(words[words.length - 1])) words.pop();
  const last = words[words.length - 1];
  if (last === undefined) return false;
  const head = PLURAL_HEADS[last] ?? last;
  const before = words.length > 1 ? words[words.length - 2] : undefined;
  if (head === 'key') return before === undefined || !IDENTIFIER_KEYS.has(before);
  if (SECRET_HEADS.has(head)) return true;
  if (before !== undefined && SECRET_PAIRS.has(`${before} ${head}`)) return true;
  return words.length === 1 && SECRET_SUFFIXES.some((suffix) => head.endsWith(suffix));
}

const decided = new Map<string, boolean>();
const MAX_DECIDED = 5000;

/** Whether a field of this name holds a secret (see the rules above); names repeat, so the answers are kept. */
export function isSecretName(name: string): boolean {
  let secret = decided.get(name);
  if (secret === undefined) {
    secret = decideSecretName(name);
    if (decided.size >= MAX_DECIDED) decided.clear();
    decided.set(name, secret);
  }
  return secret;
}

/** Whether a value under a secret name is taken out: anything that can hold a secret (not a boolean, null or ''). */
function holdsSecret(value: unknown): boolean {
  return value !== null && value !== undefined && value !== '' && typeof value !== 'boolean';
}

const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
/** A JWT: two or three base64url parts, the first one a JSON object (`{"` encodes to `eyJ`). */
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;
/** `scheme://user:password@host` (and `scheme://user@host`). */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
/**
 * `"name": "..."` (or a number) in JSON text, whatever else the text is; redacted when the name is a secret's. A name
 * opens at a quote no backslash escapes (as every key of a JSON text does): a name read from each escaped quote of
 * `\"\"\"…` ran over up to 128 of them, 320 ms on 1 MiB; from unescaped quotes only, each character is read once.
 */
const JSON_FIELD = /((?<!\\)"((?:[^"\\\n]|\\.){1,128})"\s*:\s*)("(?:[^"\\]|\\.)+"|-?\d[\d.eE+-]*)/g;
/** `"name": {` or `"name": [` in JSON text: an object or array under a secret's name is taken out whole. */
const JSON_OPEN = /((?<!\\)"((?:[^"\\\n]|\\.){1,128})"\s*:\s*)[{[]/g;
/** `name=` in a query string or form body (the value after it is redacted when the name is a secret's). */
const FORM_NAME = /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,128})=(?!>)/g;
/**
 * The value after `name=`: quoted (`token="a b"`, `pwd='x'`: what is between the quotes), or up to `&`, a space or a
 * quote that ends what the value is written in (`"…?token=abc",` in JSON, `'…?token=abc' }` in inspect output): a quote
 * inside a value (`token=%CE%A8'%D0%96`: encodeURIComponent leaves `'` as it is) is part of it.
 */
const FORM_VALUE = /"[^"\n]*"|'[^'\n]*'|(?:[^&\s"']|["'](?![\s,;)}\]\\]|$))+/y;

/** Where the object or array opening at `open` ends (past its closing bracket), or the text's end (cut short). */
function containerEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Each object or array under a secret's name in JSON text, `"***"` (a text cut short: to its end). */
function redactJsonContainers(text: string): string {
  let out = '';
  let from = 0;
  for (const m of text.matchAll(JSON_OPEN)) {
    const open = (m.index ?? 0) + m[1].length;
    if (open < from || !isSecretName(m[2])) continue;
    out += `${text.slice(from, open)}"${REDACTED}"`;
    from = containerEnd(text, open);
  }
  return from === 0 ? text : out + text.slice(from);
}

function redactJsonField(match: string, prefix: string, name: string): string {
  return isSecretName(name) ? `${prefix}"${REDACTED}"` : match;
}

/**
 * Each `name=value` whose name is a secret's, its value `***` (a quoted value keeps its quotes: `token="***"`); a
 * name inside a value already taken out is not looked at again.
 */
function redactFormFields(text: string): string {
  let out = '';
  let from = 0;
  for (const m of text.matchAll(FORM_NAME)) {
    const start = (m.index ?? 0) + m[0].length;
    if (start <= from || !isSecretName(m[1])) continue;
    FORM_VALUE.lastIndex = start;
    const value = FORM_VALUE.exec(text);
    if (!value) continue;
    // quoted whole (`"a b"`): the quotes stay; a value that only begins with a quote (`token="#`) is hidden whole
    const quote = /^(["'])[^\n]*\1$/.test(value[0]) && value[0].length >= 2 ? value[0][0] : '';
    if (quote !== '' && value[0].length === 2) continue; // `token=""` holds nothing
    out += `${text.slice(from, start)}${quote}${REDACTED}${quote}`;
    from = start + value[0].length;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * `name=value` or `name:value` with its `=` or `:` encoded, as a URL carried in another URL's query writes it
 * (`?next=%2Flogin%3Fuser%3Da%26password%3Dhunter2`, `%253D` encoded twice) or an HTML-safe JSON writer (Gson:
 * `password\u003dhunter2`, `\u0026` for `&`): a name after a boundary or an encoded character (`%3F`, `\u0026`).
 */
const ENCODED_NAME =
  /(?:(?<![A-Za-z0-9_.%\\-])|(?<=%[0-9A-Fa-f]{2}|\\u00[0-9A-Fa-f]{2}))([A-Za-z0-9_.-]{1,128})(%(?:25)*3[DdAa]|\\u003[dD])/g;
/**
 * Where an encoded value ends: at `&`, a blank, a quote that ends what it is written in (as in `name=value`: `'` is
 * left as it is by encodeURIComponent), a backslash escape other than `\uXXXX`, `\u0026`, or an `&`
 * encoded as the `=` before it was (`%26` after `%3D`, `%2526` after `%253D`: a `%2526` after `%3D` is an `&` inside
 * the value, encoded once more).
 */
function encodedValueEnd(text: string, start: number, separator: string): number {
  const amp = separator[0] === '%' ? `${separator.slice(0, -2)}26` : '\\u0026';
  let end = start;
  while (end < text.length) {
    const c = text[end];
    if (c === '&' || /\s/.test(c) || text.startsWith(amp, end)) break;
    if ((c === '"' || c === "'") && /^[\s,;)}\]\\]?$/.test(text.slice(end + 1, end + 2))) break;
    if (c === '\\') {
      if (text.startsWith('\\u0026', end) || !/^\\u[0-9A-Fa-f]{4}/.test(text.slice(end, end + 6))) break;
      end += 6;
    } else end++;
  }
  return end;
}

/** Each encoded `name=value` whose name is a secret's, its value `***`. */
function redactEncodedFields(text: string): string {
  let out = '';
  let from = 0;
  for (const m of text.matchAll(ENCODED_NAME)) {
    const start = (m.index ?? 0) + m[0].length;
    if (start <= from || !isSecretName(m[1])) continue;
    const end = encodedValueEnd(text, start, m[2]);
    if (end === start) continue;
    out += `${text.slice(from, start)}${REDACTED}`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * `name: value`, as a header block, a YAML-like text or a dialog writes it (`Authorization: Bearer abc`, `X-Api-Key:
 * abc`, `password: hunter2`, `Set-Cookie: sid=…`, util.inspect's `{ password: 'x' }`, Python's `{'password': 'x'}`):
 * a name that is a word of its own (or quoted, or after a `\n` escape: a line break inside a JSON or JS string), then
 * `:` (not `://`, not `::`). The same with the other ways a name is given its value: a full-width colon (`：`, `﹕`),
 * a colon JSON-escaped (`\u003a`), an arrow (`->`, `=>`: Ruby's and PHP's dumps), and `=` with a blank on a side
 * (`password = hunter2`: ini files, Python, log lines; `name=value` without blanks is the form rule's). Blanks are
 * any of Unicode's spaces (a no-break space before the colon). Not `==`, `!=`, `<=`: a comparison, not a value.
 */
const BLANKS = '[ \\t\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]';
const COLON_NAME = new RegExp(
  `(\\\\?["'])?(?:(?<![A-Za-z0-9_.\\\\-])|(?<=\\\\[nrt]))([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})\\1` +
    `(?:${BLANKS}*(?:(:(?!:|//)|[\\uff1a\\ufe55]|\\\\u003[aA])|->|=>)|${BLANKS}+=(?![=>])|=(?=${BLANKS}))`,
  'g',
);
const BLANK = new RegExp(`^${BLANKS}$`);
/** An authentication scheme word kept in front of the credential it carries (`Authorization: Bearer ***`). */
const SCHEME = /^(?:Bearer|Basic|Digest|Negotiate|NTLM|Token)[ \t]+(?=\S)/i;
/** A value that holds no secret, as in an object (a boolean, null), followed by the end of what it is in. */
const NO_SECRET = /^(?:true|false|null|undefined)(?=$|[\s,;)}\]])/;
/** Where a line ends: a line break, or the escape of one inside a JSON or JS string (`\n`, `\r`). */
const LINE_END = /[\n\r\u2028\u2029]|\\[nr]/g;
/** Texts longer than this are not searched for JSON strings (a colon-form value then runs to the end of its line). */
const MAX_JSON_SCAN = 65536;
/** Brackets tried as the start of a JSON text before giving up (each try may read to the end of the text). */
const MAX_JSON_TRIES = 16;

/**
 * The string literals (start, past the closing quote) of the JSON objects and arrays in a text that parse as JSON:
 * there a quote closes a string for sure, so a colon-form value inside one ends with it. Elsewhere a quote may be
 * part of a secret (`password: ab"cd`), so it ends nothing.
 */
function jsonStrings(text: string): [number, number][] {
  const spans: [number, number][] = [];
  if (text.length > MAX_JSON_SCAN) return spans;
  let tries = 0;
  for (let i = 0; i < text.length && tries < MAX_JSON_TRIES; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') continue;
    tries++;
    const end = containerEnd(text, i);
    try {
      JSON.parse(text.slice(i, end));
    } catch {
      continue;
    }
    for (let j = i; j < end; j++) {
      if (text[j] !== '"') continue;
      const start = j;
      for (j++; j < end && text[j] !== '"'; j++) if (text[j] === '\\') j++;
      spans.push([start, j + 1]);
    }
    i = end - 1;
  }
  return spans;
}

/**
 * Where the values of one text end, asked in the order they are written: the end of a value's line, or of the JSON
 * string it is in (`stringEnd`), its trailing blanks left out. The line break found and the last end trimmed are
 * kept, so many values on one long line (util.inspect of an array: `{ password: 'x' }, { password: 'y' }, …`, or
 * `token: null` repeated: kept values, each asking again) read the line once, not once per value (quadratic: 20 s
 * on a 1 MiB line).
 */
function lineEnds(text: string): (from: number, stringEnd: number) => number {
  let lineBreak = -1;
  let trimmedOf = -1;
  let trimmedTo = -1;
  return (from, stringEnd) => {
    if (lineBreak < from) {
      LINE_END.lastIndex = from;
      const m = LINE_END.exec(text);
      lineBreak = m ? m.index : text.length;
    }
    const end = Math.min(lineBreak, stringEnd);
    if (end !== trimmedOf) {
      trimmedOf = end;
      trimmedTo = end;
      while (trimmedTo > 0 && (text[trimmedTo - 1] === ' ' || text[trimmedTo - 1] === '\t')) trimmedTo--;
    }
    return Math.max(trimmedTo, from);
  };
}

/** Where each line of a text starts, asked in the order of the text: the line break after it is kept (linear). */
function lineStarts(text: string): (at: number) => number {
  let start = 0;
  let lineBreak = -1;
  let nextStart = 0;
  return (at) => {
    for (;;) {
      if (lineBreak < start) {
        LINE_END.lastIndex = start;
        const m = LINE_END.exec(text);
        lineBreak = m ? m.index : text.length;
        nextStart = m ? m.index + m[0].length : text.length;
      }
      if (lineBreak >= at || nextStart > at) return start;
      start = nextStart;
    }
  };
}

/** A line break at a place (`\r\n`, `\n`…, or its escape inside a JSON or JS string). */
const BREAK_AT = /\r\n|[\n\r\u2028\u2029]|\\r\\n|\\[nr]/y;
/** The header of a YAML block scalar (`|`, `>-`, `|2+`, a comment after it): its text is on the lines below. */
const BLOCK_HEADER = /^[|>](?:[1-9][+-]?|[+-][1-9]?)?(?:[ \t]+#.*)?$/;

/**
 * A YAML value on the lines below its name (`password:` then `  hunter2`, a block scalar `password: |` or `>-`): the
 * lines after `from` (the end of the name's line) indented deeper than the name's line (`depth`), blank lines between
 * them included, and under an empty value a sequence at the name's column (`tokens:` then `- a`); within the JSON
 * string the name is in (`stringEnd`). → from the first line's first character to the last one's end (trailing blanks
 * left out), or undefined when no line below is part of it. Each line is read once (the lines it takes are not read
 * again; the one that ends it only up to its first character).
 */
function valueBelow(
  text: string,
  from: number,
  stringEnd: number,
  depth: number,
  column: number,
  empty: boolean,
): [number, number] | undefined {
  let first = -1;
  let last = -1;
  let pos = from;
  for (;;) {
    while (pos < stringEnd && (text[pos] === ' ' || text[pos] === '\t')) pos++;
    BREAK_AT.lastIndex = pos;
    const lineBreak = pos < stringEnd ? BREAK_AT.exec(text) : null;
    if (!lineBreak) break;
    const lineAt = pos + lineBreak[0].length;
    let c = lineAt;
    while (c < stringEnd && (text[c] === ' ' || text[c] === '\t')) c++;
    if (c >= stringEnd) break;
    BREAK_AT.lastIndex = c;
    if (BREAK_AT.test(text)) {
      pos = c; // a blank line
      continue;
    }
    const item =
      empty && c - lineAt === column && text[c] === '-' && (c + 1 === stringEnd || /[ \t\n\r\u2028\u2029\\]/.test(text[c + 1]));
    if (c - lineAt <= depth && !item) break;
    let e = c;
    while (
      e < stringEnd &&
      !/[\n\r\u2028\u2029]/.test(text[e]) &&
      !(text[e] === '\\' && (text[e + 1] === 'n' || text[e + 1] === 'r'))
    )
      e++;
    pos = e;
    while (e > c && (text[e - 1] === ' ' || text[e - 1] === '\t')) e--;
    if (first < 0) first = c;
    last = e;
  }
  return first < 0 ? undefined : [first, last];
}

/** The part of a value that is the secret: after a scheme word (`Bearer `), or all of it; none for `false`, `null`. */
function secretPart(value: string): number | undefined {
  if (NO_SECRET.test(value)) return undefined;
  const scheme = SCHEME.exec(value);
  return scheme ? scheme[0].length : 0;
}

/**
 * Each `name: value` whose name is a secret's, its value `***`. The value is what follows the colon and spaces: a
 * quoted one (closed on its line) is what is between the quotes; any other runs to the end of its line (a secret
 * may hold spaces, quotes, `=`, `:`, `&`), or of the JSON string it is written in. A scheme word in front is kept
 * (`Authorization: Bearer ***`); `true`, `false`, `null` hold nothing and are kept, as in an object.
 */
function redactColonFields(text: string): string {
  let out = '';
  let from = 0;
  let strings: [number, number][] | undefined;
  let next = 0; // the first string not ending before this match (the strings are in order, so are the matches)
  const lineEnd = lineEnds(text);
  const lineStart = lineStarts(text);
  for (const m of text.matchAll(COLON_NAME)) {
    const at = m.index ?? 0;
    let start = at + m[0].length;
    if (at < from || !isSecretName(m[2])) continue;
    while (start < text.length && BLANK.test(text[start])) start++;
    strings ??= text.includes('"') && /[{[]/.test(text) ? jsonStrings(text) : [];
    while (next < strings.length && strings[next][1] <= at) next++;
    const inString = next < strings.length && strings[next][0] < at ? strings[next] : undefined;
    const stringEnd = inString ? inString[1] - 1 : text.length;
    let end = lineEnd(start, stringEnd);
    if (m[3] !== undefined && (end <= start || BLOCK_HEADER.test(text.slice(start, end)))) {
      // a YAML value on the lines below (`password:` or `password: |`, then `  hunter2`)
      const lineAt = Math.max(lineStart(at), inString ? inString[0] + 1 : 0);
      let depth = lineAt;
      while (depth < at && (text[depth] === ' ' || text[depth] === '\t')) depth++;
      const below = valueBelow(text, end, stringEnd, depth - lineAt, at - lineAt, end <= start);
      if (below) {
        out += `${text.slice(from, below[0])}${REDACTED}`;
        from = below[1];
        continue;
      }
    }
    const quote = text[start];
    if ((quote === '"' || quote === "'") && !inString) {
      let close = start + 1;
      while (close < end && text[close] !== quote) close += text[close] === '\\' ? 2 : 1;
      if (close < end) {
        start++; // a quoted value: what is between the quotes
        end = close;
      }
    }
    if (end <= start) continue;
    const keep = secretPart(text.slice(start, end));
    if (keep === undefined) continue;
    out += `${text.slice(from, start + keep)}${REDACTED}`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Leading zeros an HTML reference may carry (`&#x000E4;`): a few, so a spelling's length stays bounded. */
const MAX_LEADING_ZEROS = 6;
/** The blanks that may indent the line after a space a text was wrapped at (more: not taken for the secret). */
const MAX_WRAP_INDENT = 32;
/**
 * The longest spelling of one character (code point) of a secret: `&#x` + zeros + 6 digits + `;`, or a space as a
 * line break (`\r\n`) and the next line's indent.
 */
const MAX_SPELLED_CHAR = Math.max(4 + MAX_LEADING_ZEROS + 6, 2 + MAX_WRAP_INDENT);

/** A hex number as a pattern: its letters in either case, at least `width` digits (a few more leading zeros allowed). */
function hexPattern(n: number, width: number, moreZeros = false): string {
  const hex = n.toString(16).padStart(width, '0');
  const digits = [...hex].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
  return moreZeros ? `0{0,${MAX_LEADING_ZEROS}}${digits}` : digits;
}

/** The named HTML references of the characters HTML escapers name. */
const HTML_NAMES: Record<string, string[]> = {
  '&': ['&amp;'],
  '<': ['&lt;'],
  '>': ['&gt;'],
  '"': ['&quot;'],
  "'": ['&apos;'],
  ' ': ['&nbsp;'],
};

/** JSON's short escapes (JSON.stringify's, and PHP's `\/`). */
const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/**
 * How an echoed text may spell one character of a secret: letters and digits as they are; any other character also
 * as JSON escapes it (`\u002B`, `\u00e4` in either letter case: System.Text.Json, Python and Jackson escape so; `\/`,
 * `\"`), as URLs and forms encode it (`%2b` in either case, each UTF-8 byte; a space as `+`), as Latin-1 URLs and
 * JavaScript's escape() do (`%E4`: one byte up to U+00FF; `%u20AC`, a character beyond the BMP as its two halves) and
 * as HTML does (`&amp;`, `&#39;`, `&#xE4;`, a space as `&nbsp;`). A space may also be where a text was wrapped: a
 * line break and the next line's indent (all its blanks, at most MAX_WRAP_INDENT: one way to read them, no
 * backtracking over them).
 */
function characterPattern(ch: string): string {
  if (/^[A-Za-z0-9]$/.test(ch)) return ch;
  const forms: string[] = [];
  const units = [...Array(ch.length).keys()].map((i) => ch.charCodeAt(i));
  forms.push(units.map((u) => `\\\\u${hexPattern(u, 4)}`).join(''));
  if (JSON_SHORT[ch]) forms.push(escapeRegExp(JSON_SHORT[ch]));
  const lone = ch.length === 1 && ch.charCodeAt(0) >= 0xd800 && ch.charCodeAt(0) <= 0xdfff;
  // a lone surrogate (a password read from JSON "\ud800") has no UTF-8 bytes: its other forms still go
  if (!lone) forms.push([...Buffer.from(ch, 'utf8')].map((b) => `%${hexPattern(b, 2)}`).join(''));
  if (ch.length === 1 && ch.charCodeAt(0) >= 0x80 && ch.charCodeAt(0) <= 0xff) forms.push(`%${hexPattern(ch.charCodeAt(0), 2)}`);
  forms.push(units.map((u) => `%[uU]${hexPattern(u, 4)}`).join(''));
  if (ch === ' ') forms.push('\\+', `\\r?\\n[ \\t]{0,${MAX_WRAP_INDENT}}(?![ \\t])`);
  const code = ch.codePointAt(0) ?? 0;
  forms.push(`&#0{0,${MAX_LEADING_ZEROS}}${code};`, `&#[xX]${hexPattern(code, 1, true)};`, ...(HTML_NAMES[ch] ?? []));
  // as it is last: a sign that is also an escape's first (`%`, `&`, `\`) takes its whole escape when it can, so
  // `%25` of a secret ending in `%` is not cut to `***25`
  forms.push(escapeRegExp(ch));
  return `(?:${forms.join('|')})`;
}

/** The longest run of letters and digits in a secret: every spelling holds it as it is. */
function plainRun(secret: string): string {
  return (secret.match(/[A-Za-z0-9]+/g) ?? []).reduce((a, b) => (b.length > a.length ? b : a), '');
}

interface SecretPattern {
  /** a text without this holds no spelling of the secret (undefined: every text is searched) */
  probe?: string;
  pattern: RegExp;
  /** whether two of its echoes can overlap: its start is also its end (`x7kx7`, `!!!`), so each start is tried */
  overlaps: boolean;
}

/** Whether a text starts with what it ends with (a border: `x7` of `x7kx7`), by the prefix function (linear). */
function hasBorder(text: string): boolean {
  const border = new Array<number>(text.length).fill(0);
  for (let i = 1; i < text.length; i++) {
    let k = border[i - 1];
    while (k > 0 && text[i] !== text[k]) k = border[k - 1];
    border[i] = text[i] === text[k] ? k + 1 : k;
  }
  return text.length > 0 && border[text.length - 1] > 0;
}

/** Every spelling of a secret in an echoed text (see characterPattern), as one pattern. */
function secretPattern(secret: string): SecretPattern {
  const run = plainRun(secret);
  return {
    ...(run.length >= MIN_SECRET_LENGTH ? { probe: run } : {}),
    pattern: new RegExp([...secret].map(characterPattern).join(''), 'g'),
    overlaps: hasBorder(secret),
  };
}

/**
 * secretPattern() of each secret of a list, kept per list (the configured secrets, an lh-server's own): every redacted
 * text asked for them again (profiled on the audit path). A list is compared with the one its patterns were made
 * from, so a list changed in place is spelled again; no secret is kept beyond the list that holds it.
 */
const spelledLists = new WeakMap<readonly string[], { from: string[]; patterns: (SecretPattern | undefined)[] }>();

function patternsFor(secrets: readonly string[]): (SecretPattern | undefined)[] {
  const kept = spelledLists.get(secrets);
  if (kept && kept.from.length === secrets.length && kept.from.every((s, i) => s === secrets[i])) return kept.patterns;
  const patterns = secrets.map((s) => (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH ? secretPattern(s) : undefined));
  spelledLists.set(secrets, { from: [...secrets], patterns });
  return patterns;
}

/**
 * Where spellings of a secret stand in `text`, those that overlap as one span, in order. Of a secret whose
 * echoes can overlap, every one wherever it starts (`aba` twice in `ababa`: a search going on after the end of the
 * last one found missed the second, and `ba` of it went out); of any other, one after the other (a search from each
 * start would cost a secret's length at every character of a run of its echoes).
 */
function spansOf(text: string, { pattern, overlaps }: SecretPattern): [number, number][] {
  const spans: [number, number][] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const end = m.index + m[0].length;
    const last = spans[spans.length - 1];
    if (last !== undefined && m.index < last[1]) last[1] = Math.max(last[1], end);
    else spans.push([m.index, end]);
    if (overlaps) pattern.lastIndex = m.index + 1;
  }
  return spans;
}

/** The text with each span `***`. */
function blankSpans(text: string, spans: readonly [number, number][]): string {
  let out = '';
  let from = 0;
  for (const [start, end] of spans) {
    out += `${text.slice(from, start)}${REDACTED}`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The start of `text`, at most `max` characters, never cut inside a spelling of one of `secrets` (then cut before it):
 * a secret cut in two is no longer recognised, and what was left of it would go out as it is. For the texts the client
 * keeps of an answer (an error's body) before the redaction step at a node's edge sees them.
 */
export function clipOutside(text: string, max: number, secrets: readonly string[]): string {
  if (text.length <= max) return text;
  const longest = secrets.reduce((n, s) => (typeof s === 'string' ? Math.max(n, s.length) : n), 0);
  const window = text.slice(0, max + longest * MAX_SPELLED_CHAR);
  let cut = max;
  for (let moved = true; moved;) {
    moved = false;
    for (const p of patternsFor(secrets)) {
      if (!p) continue;
      for (const [start, end] of spansOf(window, p)) {
        if (start < cut && end > cut) {
          cut = start;
          moved = true;
        }
      }
    }
  }
  return text.slice(0, cut);
}

/**
 * The texts a request body holds under secret names (`password`, `newPassword`, `oldPassword`), longest first: an
 * instrument refusing the request may quote them in free text, which no name then marks.
 */
export function secretsIn(body: unknown, depth = 0, out: string[] = []): string[] {
  if (typeof body !== 'object' || body === null || depth > 4) return out;
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string' && value !== '' && isSecretName(name)) out.push(value);
    else if (typeof value === 'object') secretsIn(value, depth + 1, out);
  }
  return depth === 0 ? out.sort((a, b) => b.length - a.length) : out;
}

export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  if (secrets.length > 0) {
    for (const p of patternsFor(secrets)) {
      if (p && (p.probe === undefined || out.includes(p.probe))) out = blankSpans(out, spansOf(out, p));
    }
  }
  // Each pattern runs only on a text holding what its every match must contain (a text without a secret is
  // returned as it is, without five scans of it): a JWT starts `eyJ`, userinfo follows `://`, a JSON field has
  // quotes, a colon field `:` (or `=`, `->`, `：`, `\u003a`), a form field `=`, an encoded one `%` or `\u003`; `Bearer` in any letter case is left to its own pattern.
  if (out.includes('eyJ')) out = out.replace(JWT, REDACTED);
  out = out.replace(BEARER, `$1 ${REDACTED}`);
  if (out.includes('://')) out = out.replace(USERINFO, `$1${REDACTED}@`);
  if (out.includes('"')) out = redactJsonContainers(out).replace(JSON_FIELD, redactJsonField);
  if (/[:=>\uff1a\ufe55]|\\u003a/i.test(out)) out = redactColonFields(out);
  if (out.includes('=')) out = redactFormFields(out);
  if (out.includes('%') || out.includes('\\u003')) out = redactEncodedFields(out);
  return out;
}

/**
 * A copy of `value` with every string redacted and every secret-named property replaced; cycles and depth are
 * bounded. Buffers and other non-plain objects are kept as they are.
 */
export function redactValue<T>(value: T, secrets: readonly string[] = []): T {
  return walk(value, secrets, 0, new WeakMap()) as T;
}

function walk(value: unknown, secrets: readonly string[], depth: number, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(walk(item, secrets, depth + 1, seen));
    return out;
  }
  // an object literal of any realm (a function node's code runs in a sandbox with an Object of its own) is walked
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== null && (Object.getPrototypeOf(proto) !== null || Object.prototype.toString.call(value) !== '[object Object]'))
    return value;
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = holdsSecret(v) && isSecretName(k) ? REDACTED : walk(v, secrets, depth + 1, seen);
  }
  return out;
}

/**
 * The same error, its message, stack and body redacted in place (so its class and every other property stay as
 * they are, including Node-RED's view of it via `cause`).
 */
export function redactError<E extends Error>(err: E, secrets: readonly string[] = []): E {
  const e = err as E & { body?: unknown };
  const message = redactText(e.message, secrets);
  if (message !== e.message) e.message = message;
  if (typeof e.stack === 'string') e.stack = redactText(e.stack, secrets);
  if (Object.prototype.hasOwnProperty.call(e, 'body') && e.body !== undefined) {
    try {
      (e as { body?: unknown }).body = redactValue(e.body, secrets);
    } catch {
      // a frozen or getter-only body: leave it; it is redacted again where it is shown
    }
  }
  return err;
}
