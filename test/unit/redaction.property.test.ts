/**
 * The redaction step skips the patterns a text cannot match and keeps each list's spellings (issue 22.6). Over
 * generated secrets (any characters, unicode, regex metacharacters, lone surrogates) embedded in generated texts
 * (URLs, JSON, query strings, headers, error messages, their JSON-escaped and percent-encoded spellings), it takes
 * out exactly what the implementation before it (e7dc281, kept below as the reference) took out, and the redacted
 * text holds no spelling of a secret. Since review88 the reference takes a configured secret out in the escapes of
 * other stacks too (spelledSecret below), as redactText does.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { isSecretName, REDACTED, redactText, redactValue } from '../../src/contract/redaction';
import { parseSeed } from '../support/prng';

/**
 * The properties' seed, in their titles: fixed, so every `npm test` draws the same texts (unseeded, about one run in
 * thirty failed in CI on a text the reference read wrong); `LH_PROPERTY_SEED=<n>` draws others.
 */
const SEED = process.env.LH_PROPERTY_SEED ? parseSeed(process.env.LH_PROPERTY_SEED) : 360_001;

// ---- reference: redactText of e7dc281, its secret-named fields decided by name (issue 29.4), quoted values (review20),
// the colon form (review32) ----
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
// review31: `"name": ""` holds nothing (kept, as in an object); an object or array under a secret name is taken out;
// review38: a name opens at a quote no backslash escapes
const JSON_SECRET_FIELD = /((?<!\\)"((?:[^"\\\n]|\\.){1,128})"\s*:\s*)("(?:[^"\\]|\\.)+"|-?\d[\d.eE+-]*)/g;
const JSON_SECRET_OPEN = /("((?:[^"\\\n]|\\.){1,128})"\s*:\s*)(?=[{[])/y;
/** Each object or array under a secret name, `"***"`: its end found with a stack of the closers it waits for. */
function jsonContainers(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    JSON_SECRET_OPEN.lastIndex = i;
    const m = text[i] === '"' && text[i - 1] !== '\\' ? JSON_SECRET_OPEN.exec(text) : null;
    if (!m || !isSecretName(m[2])) {
      out += text[i];
      i++;
      continue;
    }
    out += `${m[1]}"${REDACTED}"`;
    const closers: string[] = [];
    let j = i + m[1].length;
    let inString = false;
    for (; j < text.length; j++) {
      const c = text[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') closers.push('}');
      else if (c === '[') closers.push(']');
      else if ((c === '}' || c === ']') && closers.pop() !== undefined && closers.length === 0) break;
    }
    i = j + 1;
  }
  return out;
}
/** Every `name=value` with a secret name, the value redacted, each name looked at (also one inside a value). */
function formFields(text: string): string {
  const cut: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '=') continue;
    let j = i;
    while (j > 0 && /[A-Za-z0-9_.-]/.test(text[j - 1]) && i - j < 128) j--;
    if (j === i || (j > 0 && /[A-Za-z0-9_.-]/.test(text[j - 1]))) continue;
    if (!isSecretName(text.slice(j, i))) continue;
    if (cut.length > 0 && i + 1 <= cut[cut.length - 1][1]) continue;
    if (text[i + 1] === '>') continue; // review38: `name=>value` is the colon form's
    const q = text[i + 1];
    const close = q === '"' || q === "'" ? text.indexOf(q, i + 2) : -1;
    if (close > 0 && !text.slice(i + 2, close).includes('\n')) {
      // a quoted value (review20): what is between the quotes; `token=""` holds nothing
      if (close > i + 2) cut.push([i + 2, close]);
      continue;
    }
    let k = i + 1;
    // review32: a quote ends a bare value only when what follows it ends what the value is written in
    while (k < text.length && !/[&\s]/.test(text[k]) && !(/["']/.test(text[k]) && /^[\s,;)}\]\\]?$/.test(text[k + 1] ?? ''))) k++;
    if (k > i + 1) cut.push([i + 1, k]);
  }
  let out = '';
  let from = 0;
  for (const [a, b] of cut) {
    out += text.slice(from, a) + REDACTED;
    from = b;
  }
  return out + text.slice(from);
}
/** review32: the string literals of the JSON texts (objects, arrays) in a text that parse, found with a stack. */
function jsonStringSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  if (text.length > 65536) return spans;
  let tries = 0;
  for (let i = 0; i < text.length && tries < 16; i++) {
    if (text[i] !== '{' && text[i] !== '[') continue;
    tries++;
    const closers: string[] = [];
    const inside: [number, number][] = [];
    let j = i;
    let open = -1;
    for (; j < text.length; j++) {
      const c = text[j];
      if (open >= 0) {
        if (c === '\\') j++;
        else if (c === '"') {
          inside.push([open, j + 1]);
          open = -1;
        }
      } else if (c === '"') open = j;
      else if (c === '{') closers.push('}');
      else if (c === '[') closers.push(']');
      else if ((c === '}' || c === ']') && closers.pop() !== undefined && closers.length === 0) break;
    }
    try {
      JSON.parse(text.slice(i, j + 1));
    } catch {
      continue;
    }
    spans.push(...inside);
    i = j;
  }
  return spans;
}
const NAME_CHAR = /[A-Za-z0-9_.-]/;
/** review38: blanks are Unicode's spaces and the tab. */
const isBlank = (c: string | undefined): boolean => c !== undefined && /^[\t\p{Zs}]$/u.test(c);
/** Whether a line break ends right before `at` (`\n`, `\r`, U+2028/9, or a `\n`/`\r` escape). */
function isLineBreakBefore(text: string, at: number): boolean {
  return '\n\r\u2028\u2029'.includes(text[at - 1]) || (at >= 2 && text[at - 2] === '\\' && 'nr'.includes(text[at - 1]));
}
/**
 * review38: the lines below a YAML name (from `from`, the end of its line, to `limit`) that belong to its value: deeper
 * than `depth`, or an item (`- a`) at the name's `column` under an empty value; blank lines between them.
 */
function yamlBelow(
  text: string,
  from: number,
  limit: number,
  depth: number,
  column: number,
  empty: boolean,
): [number, number] | undefined {
  const lines: [number, number][] = []; // each line below: its start, its end
  let p = from;
  while (p < limit && ' \t'.includes(text[p])) p++;
  for (;;) {
    const rest = text.slice(p, limit);
    const br = /^(?:\r\n|[\n\r\u2028\u2029]|\\r\\n|\\[nr])/.exec(rest);
    if (!br) break;
    const lineAt = p + br[0].length;
    let e = lineAt;
    while (e < limit && !'\n\r\u2028\u2029'.includes(text[e]) && !(text[e] === '\\' && 'nr'.includes(text[e + 1] ?? ''))) e++;
    lines.push([lineAt, e]);
    p = e;
  }
  let first = -1;
  let last = -1;
  for (const [a, b] of lines) {
    const content = text.slice(a, b).replace(/^[ \t]+/, '');
    if (content === '') continue; // a blank line
    const indent = b - a - content.length;
    const item = empty && indent === column && /^-(?:$|[ \t\\])/.test(content);
    if (indent <= depth && !item) break;
    if (first < 0) first = a + indent;
    last = a + indent + content.replace(/[ \t]+$/, '').length;
  }
  return first < 0 ? undefined : [first, last];
}
/** review32: every `name: value` with a secret name, its value (quoted: between the quotes) to the end of its line. */
function colonFields(text: string): string {
  const spans = jsonStringSpans(text);
  const cut: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    if (!/[A-Za-z0-9_]/.test(text[i])) continue;
    const afterEscape = i >= 2 && text[i - 2] === '\\' && 'nrt'.includes(text[i - 1]);
    if (i > 0 && !afterEscape && (NAME_CHAR.test(text[i - 1]) || text[i - 1] === '\\')) continue;
    let j = i;
    while (j < text.length && NAME_CHAR.test(text[j])) j++;
    const name = text.slice(i, j);
    if (name.length > 128) continue;
    let k = j;
    // a quoted name ('password': …, "password": …, \"password\": …): the same quote closes it
    // (`\"password": …`, the quote after the name unescaped: the plain quote before it is the one that pairs)
    const before = text.slice(Math.max(0, i - 2), i);
    const quoted = [/\\["']$/.exec(before)?.[0], /["']$/.exec(before)?.[0]].find((q) => q !== undefined && text.startsWith(q, j));
    if (quoted !== undefined) k = j + quoted.length;
    // review38: a colon in any spelling (`：`, `﹕`, `\u003a`), an arrow, or `=` with a blank on a side, after any blanks
    const afterName = k;
    while (isBlank(text[k])) k++;
    let colon = false;
    if (text[k] === ':') {
      if (text[k + 1] === ':' || text.startsWith('//', k + 1)) continue;
      colon = true;
      k += 1;
    } else if (text[k] === '\uff1a' || text[k] === '\ufe55') {
      colon = true;
      k += 1;
    } else if (/^\\u003[aA]$/.test(text.slice(k, k + 6))) {
      colon = true;
      k += 6;
    } else if (text.startsWith('->', k) || text.startsWith('=>', k)) k += 2;
    else if (text[k] === '=' && !'=>'.includes(text[k + 1] ?? '') && (k > afterName || isBlank(text[k + 1]))) k += 1;
    else continue;
    k -= 1;
    if (!isSecretName(name) || (cut.length > 0 && i < cut[cut.length - 1][1])) continue;
    let start = k + 1;
    while (isBlank(text[start])) start++;
    // in a JSON string: the name's own opening quote (a key, `{"token":"x\"y"}`) does not put it in one
    const at = i - (quoted?.length ?? 0);
    const span = spans.find(([a, b]) => a < at && at < b);
    let end = start;
    while (
      end < text.length &&
      !'\n\r\u2028\u2029'.includes(text[end]) &&
      !(text[end] === '\\' && (text[end + 1] === 'n' || text[end + 1] === 'r'))
    )
      end++;
    if (span) end = Math.min(end, span[1] - 1);
    while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
    // review38: an empty value or a YAML block header: the value is on the lines below
    if (colon && (end === start || /^[|>](?:[1-9][+-]?|[+-][1-9]?)?(?:[ \t]+#.*)?$/.test(text.slice(start, end)))) {
      let lineAt = at;
      while (lineAt > 0 && !isLineBreakBefore(text, lineAt)) lineAt--;
      if (span) lineAt = Math.max(lineAt, span[0] + 1);
      let depth = 0;
      while (lineAt + depth < at && ' \t'.includes(text[lineAt + depth])) depth++;
      const below = yamlBelow(text, end, span ? span[1] - 1 : text.length, depth, at - lineAt, end === start);
      if (below) {
        cut.push(below);
        i = below[1] - 1;
        continue;
      }
    }
    const q = text[start];
    if (!span && (q === '"' || q === "'")) {
      let c = start + 1;
      while (c < end && text[c] !== q) c += text[c] === '\\' ? 2 : 1;
      if (c < end) [start, end] = [start + 1, c];
    }
    const value = text.slice(start, end);
    if (value === '' || /^(?:true|false|null|undefined)(?=$|[\s,;)}\]])/.test(value)) continue;
    const scheme = /^(?:bearer|basic|digest|negotiate|ntlm|token)[ \t]+(?=\S)/i.exec(value);
    cut.push([start + (scheme ? scheme[0].length : 0), end]);
    i = end - 1;
  }
  let out = '';
  let from = 0;
  for (const [a, b] of cut) {
    out += text.slice(from, a) + REDACTED;
    from = b;
  }
  return out + text.slice(from);
}
/** review38: every encoded `name%3Dvalue` (`%3A`, `%253D`, `\u003d`) with a secret name, its value redacted. */
function encodedFields(text: string): string {
  const cut: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    const sep = /^(?:%(?:25)*3[DdAa]|\\u003[dD])/.exec(text.slice(i, i + 64));
    if (!sep) continue;
    let runStart = i;
    while (runStart > 0 && NAME_CHAR.test(text[runStart - 1])) runStart--;
    // the leftmost start in the run after a boundary: not a name character, `%` or `\`, or an escape `%3F`, `\u0026`
    let j = -1;
    for (let k = runStart; k < i; k++) {
      const plain = k === 0 || !/[A-Za-z0-9_.%\\-]/.test(text[k - 1]);
      const escaped =
        /%[0-9A-Fa-f]{2}$/.test(text.slice(Math.max(0, k - 3), k)) ||
        /\\u00[0-9A-Fa-f]{2}$/.test(text.slice(Math.max(0, k - 6), k));
      if ((plain || escaped) && i - k <= 128) {
        j = k;
        break;
      }
    }
    if (j < 0 || !isSecretName(text.slice(j, i))) continue;
    const start = i + sep[0].length;
    if (cut.length > 0 && start <= cut[cut.length - 1][1]) continue;
    let e = start;
    for (;;) {
      const c = text[e];
      if (c === undefined) break;
      // an `&` encoded as the separator was (`%26` after `%3D`, `%2526` after `%253D`); `\u0026` always
      if (c === '%') {
        if (sep[0].startsWith('%') && text.startsWith(`%${'25'.repeat((sep[0].length - 3) / 2)}26`, e)) break;
        e++;
      } else if (c === '\\') {
        if (!/^\\u[0-9A-Fa-f]{4}/.test(text.slice(e, e + 6)) || text.startsWith('\\u0026', e)) break;
        e += 6;
      } else if (c === '&' || /\s/.test(c)) break;
      else if ((c === '"' || c === "'") && (e + 1 === text.length || /[\s,;)}\]\\]/.test(text[e + 1]))) break;
      else e++;
    }
    if (e > start) cut.push([start, e]);
    i = start - 1;
  }
  let out = '';
  let from = 0;
  for (const [a, b] of cut) {
    out += text.slice(from, a) + REDACTED;
    from = b;
  }
  return out + text.slice(from);
}
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * review88: a secret in any escape of the stacks in front of an instrument, sign by sign (letters and digits as they
 * are): `\uXXXX` per UTF-16 unit and hex digits in either case, JSON's short escapes, `%XX` per UTF-8 byte in either
 * case, `+` for a space, HTML's decimal, hex and named references. Written out plainly here (no probe, no list kept).
 * review92: also a Latin-1 byte (`%E4`) and escape()'s `%uXXXX` per UTF-16 unit, a space as `&nbsp;` or a line break
 * and the next line's indent (up to 32 blanks, all of them), and the sign as it is tried last (an escape is taken
 * whole: a secret ending in `\` echoed in JSON as `\\` leaves no backslash behind).
 */
function spelledSecret(secret: string): RegExp {
  const anyCase = (hex: string): string => hex.replace(/[a-f]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
  const short: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '/': '\\/',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
  };
  const named: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": '&apos;',
    ' ': '&nbsp;',
  };
  const sign = (c: string): string => {
    if (/^[A-Za-z0-9]$/.test(c)) return c;
    const forms: string[] = [];
    let units = '';
    for (let i = 0; i < c.length; i++) units += `\\\\u${anyCase(c.charCodeAt(i).toString(16).padStart(4, '0'))}`;
    forms.push(units);
    if (short[c] !== undefined) forms.push(escapeRegExp(short[c]));
    const lone = c.length === 1 && /[\ud800-\udfff]/.test(c);
    if (!lone)
      forms.push(
        Array.from(Buffer.from(c, 'utf8'))
          .map((b) => `%${anyCase(b.toString(16).padStart(2, '0'))}`)
          .join(''),
      );
    if (c.length === 1 && c.charCodeAt(0) >= 0x80 && c.charCodeAt(0) <= 0xff)
      forms.push(`%${anyCase(c.charCodeAt(0).toString(16))}`);
    let percentU = '';
    for (let i = 0; i < c.length; i++) percentU += `%[uU]${anyCase(c.charCodeAt(i).toString(16).padStart(4, '0'))}`;
    forms.push(percentU);
    if (c === ' ') forms.push('\\+', '\\r?\\n[ \\t]{0,32}(?![ \\t])');
    const code = c.codePointAt(0) ?? 0;
    forms.push(`&#0{0,6}${code};`, `&#[xX]0{0,6}${anyCase(code.toString(16))};`);
    if (named[c] !== undefined) forms.push(named[c]);
    forms.push(escapeRegExp(c));
    return `(?:${forms.join('|')})`;
  };
  return new RegExp(Array.from(secret).map(sign).join(''), 'g');
}
function oldRedactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 3) continue;
    // review92: echoes that overlap (a secret whose start is also its end) are all found, and taken out as one
    const bordered = [...Array(secret.length).keys()].some((d) => d > 0 && secret.startsWith(secret.slice(d)));
    const pattern = spelledSecret(secret);
    const spans: [number, number][] = [];
    for (let m = pattern.exec(out); m !== null; m = pattern.exec(out)) {
      const last = spans[spans.length - 1];
      if (last !== undefined && m.index < last[1]) last[1] = Math.max(last[1], m.index + m[0].length);
      else spans.push([m.index, m.index + m[0].length]);
      if (bordered) pattern.lastIndex = m.index + 1;
    }
    out = spans.reduceRight((t, [a, b]) => t.slice(0, a) + REDACTED + t.slice(b), out);
  }
  return encodedFields(
    formFields(
      colonFields(
        out
          .replace(JWT, REDACTED)
          .replace(BEARER, `$1 ${REDACTED}`)
          .replace(USERINFO, `$1${REDACTED}@`)
          .replace(/[^]*/, (t) => jsonContainers(t))
          .replace(JSON_SECRET_FIELD, (m: string, prefix: string, name: string) =>
            isSecretName(name) ? `${prefix}"${REDACTED}"` : m,
          ),
      ),
    ),
  );
}
// ---- end of the reference ----

const META = [...'.*+?^${}()|[]\\/"\'%&=:@#<> \t\n'];
const secretChar = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  fc.constantFrom(...META),
  fc.constantFrom('é', 'ß', 'Ω', '😀', '\u2028', '\u0000', 'eyJ', 'Bearer', '://'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
);
const secret = fc
  .array(secretChar, { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(''))
  .filter((s) => s.length >= 3);

/** The spellings a secret takes in a text: as typed, JSON-escaped, percent-encoded. */
function spellingsOf(s: string): string[] {
  return [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)];
}

const noise = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    'https://',
    'http://user:pw@host/',
    '?a=1&password=',
    'token=',
    '"password": "',
    '{"token":"x\\"y"}',
    '{"auth":{"a":"',
    '"credentials": [',
    ']}',
    'Authorization: Bearer ',
    'X-Api-Key: ',
    'pAsSwOrD:\t',
    '\\npassword: ',
    'auth::',
    'secret://',
    'token: false,',
    '{"detail":"password: ',
    '"}',
    '\r\n',
    'bearer\t',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln',
    'eyJ',
    '.',
    '@',
    '"',
    '=',
    '&',
    ' ',
    '\n',
    'login failed for ',
    'aGVsbG8=',
    // review38: the other ways a name is given its value, and their ordinary look-alikes
    'password = ',
    'token =',
    'secret= ',
    'pwd\u00a0= ',
    'password -> ',
    'api_key => ',
    '"password"=>"',
    'token=>',
    'password\uff1a',
    'password\u00a0: ',
    'password\\u003a ',
    'password:\n',
    'password: |\n',
    'token: >-\n',
    'tokens:\n- ',
    '\\n  ',
    '  ',
    '- ',
    '%3Fpassword%3D',
    '%26token%253D',
    '%26',
    '%2526',
    'password%3A',
    '\\u0026password\\u003d',
    '\\u0026',
    '\\"\\"',
    'x == y',
    'a => b',
    'Key: A1 not found',
  ),
);

/** A text made of noise and the secrets, each spelled one of its ways, in the contexts a text carries them. */
const textWith = (secrets: string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        noise,
        fc
          .tuple(
            fc.constantFrom(...secrets),
            fc.integer({ min: 0, max: 2 }),
            fc.constantFrom('', 'url', 'json', 'query', 'header', 'ini', 'yaml', 'block', 'arrow', 'nested', 'gson'),
          )
          .map(([s, form, where]) => {
            let spelled: string;
            try {
              spelled = spellingsOf(s)[form];
            } catch {
              spelled = s; // a lone surrogate has no percent-encoding
            }
            if (where === 'url') return `https://admin:${spelled}@instrument.local/api`;
            if (where === 'json') return `{"password":"${spelled}","note":"${spelled}"}`;
            if (where === 'query') return `?user=a&password=${spelled}&x=1`;
            if (where === 'header') return `Authorization: Bearer ${spelled}`;
            if (where === 'ini') return `password = ${spelled}\n`;
            if (where === 'yaml') return `\npassword:\n  ${spelled}\n`;
            if (where === 'block') return `\n  token: |\n    ${spelled}\n    ${spelled}\n`;
            if (where === 'arrow') return `{"password" => "${spelled}"}`;
            if (where === 'nested') return `?next=%2Flogin%3Fuser%3Da%26password%3D${encodeURIComponent(spelled)}%26b%3D2`;
            if (where === 'gson') return `{"url":"/login?a\\u003d1\\u0026password\\u003d${spelled}\\u0026b\\u003d2"}`;
            return spelled;
          }),
      ),
      { maxLength: 8 },
    )
    .map((parts) => parts.join(''));

const secretsAndText = fc
  .array(secret, { minLength: 1, maxLength: 3 })
  .chain((secrets) => fc.tuple(fc.constant(secrets), textWith(secrets)));

describe('redaction: the skipping and kept spellings take out what e7dc281 took out (property)', function () {
  // CPU only (3,000 fixed-seed cases each, no I/O): about 3 s on a quiet core, 5.7 s at load 4 and 7 s at load 5 on
  // this 2-core machine, so mocha's 20 s is a CPU share a machine at load 10 misses. The bound stays, for a hang.
  this.timeout(60_000);
  it(`redactText gives the same text as the reference, over secrets of any characters in any context (seed ${SEED})`, () => {
    fc.assert(
      fc.property(secretsAndText, ([secrets, text]) => {
        let expected: string;
        try {
          expected = oldRedactText(text, secrets);
        } catch {
          return; // the reference throws on a lone surrogate: the next property covers it
        }
        assert.equal(redactText(text, secrets), expected);
        // the list is kept: asking again with the same list gives the same answer
        assert.equal(redactText(text, secrets), expected);
      }),
      { numRuns: 3000, seed: SEED },
    );
  });

  it(`no spelling of a secret is left in the redacted text (secrets without the mask character, seed ${SEED})`, () => {
    fc.assert(
      fc.property(
        secretsAndText.filter(([secrets]) => secrets.every((s) => !s.includes('*'))),
        ([secrets, text]) => {
          const out = redactText(text, secrets);
          for (const s of secrets) {
            for (const form of [s, JSON.stringify(s).slice(1, -1)]) {
              if (form.length >= 3) assert.ok(!out.includes(form), `${JSON.stringify(form)} left in ${JSON.stringify(out)}`);
            }
          }
        },
      ),
      { numRuns: 3000, seed: SEED },
    );
  });

  it('cases the reference comparison found (unseeded runs): a value that only opens a quote, an escaped quoted name', () => {
    // `token="#`: not a quoted value (no closing quote) but a value beginning with one: hidden whole, no quote added
    assert.equal(redactText('token="#', []), 'token=***');
    assert.equal(redactText('token="a b"', []), 'token="***"');
    assert.equal(redactText('token=""', []), 'token=""');
    // `\"password": "` (the quote after the name unescaped): a secret-named field, its lone quote hidden
    assert.equal(redactText('a\\"password": "', []), 'a\\"password": ***');
    for (const text of ['token="#', 'a\\"password": "']) assert.equal(redactText(text, []), oldRedactText(text, []));
    // a quoted secret name that is a key of a JSON object inside a text (its field not taken out as a JSON field: the
    // quote that opens it ended the field before): its value hidden (1 unseeded run in 30 failed on it, the reference
    // reading the name as inside a JSON string because its own opening quote began one)
    const keyed = '{"detail":"password: \r\n{"token":"x\\"y"}';
    assert.equal(redactText(keyed, []), '{"detail":"password: \r\n{"token":"***"}');
    assert.equal(oldRedactText(keyed, []), redactText(keyed, []));
  });

  it('a list changed in place is spelled again: a secret put into it is taken out from then on', () => {
    const list = ['first-secret'];
    assert.equal(redactText('a first-secret b', list), 'a *** b');
    list.push('second-secret');
    assert.equal(redactText('a second-secret b', list), 'a *** b');
    list[0] = 'third-secret';
    assert.equal(redactText('a third-secret first-secret', list), 'a *** first-secret');
  });

  it('a secret with a lone surrogate (a password from JSON "\\ud800") does not make redaction throw', () => {
    const lone = 'pw\ud800word';
    assert.equal(redactText(`login failed: ${lone}`, [lone]), 'login failed: ***');
    assert.equal(redactText(`login failed: ${JSON.stringify(lone).slice(1, -1)}`, [lone]), 'login failed: ***');
    assert.deepEqual(redactValue({ message: `x ${lone}` }, [lone]), { message: 'x ***' });
  });
});
