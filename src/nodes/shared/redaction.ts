/**
 * The one redaction step every text leaving a node passes (msg.error, status, logs): the configured secrets, bearer
 * tokens, JWTs, secret-named JSON fields and URL userinfo become `***`. redactText, redactValue and redactError are
 * pure (the secrets are passed in); redact, redactDeep and redactErr take out the secrets configured in this
 * Node-RED, which rememberSecrets and forgetSecrets keep.
 */

export const REDACTED = '***';

/** Secrets shorter than this are not searched for in free text (they would blank out ordinary words). */
const MIN_SECRET_LENGTH = 3;
const MAX_DEPTH = 12;

/** Keys whose values are secrets wherever they appear (compared case-insensitively). */
const SECRET_KEYS = new Set([
  'password',
  'oldpassword',
  'newpassword',
  'token',
  'instrumenttoken',
  'accesstoken',
  'access_token',
  'refreshtoken',
  'refresh_token',
  'authorization',
  'apikey',
  'secret',
]);

const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
/** A JWT: two or three base64url parts, the first one a JSON object (`{"` encodes to `eyJ`). */
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;
/** `scheme://user:password@host` (and `scheme://user@host`). */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
/** `"password": "..."` in JSON text, whatever else the text is. */
const JSON_SECRET_FIELD =
  /("(?:password|oldPassword|newPassword|token|instrumentToken|access_?token|refresh_?token|authorization|apiKey|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
/** `password=...` in a query string or form body. */
const FORM_SECRET_FIELD = /\b((?:password|oldPassword|newPassword|token|access_token|refresh_token)=)[^&\s"']+/gi;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret takes in an echoed text: as is, JSON-escaped, URL-encoded. */
function spellings(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1)]);
  try {
    forms.add(encodeURIComponent(secret));
  } catch {
    // a lone surrogate (a password read from JSON "\ud800") has no percent-encoding: its other forms still go
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * spellings() of each secret of a list, kept per list (the configured secrets, an lh-server's own): every redacted
 * text asked for them again (profiled on the audit path). A list is compared with the one its spellings were made
 * from, so a list changed in place is spelled again; no secret is kept beyond the list that holds it.
 */
const spelledLists = new WeakMap<readonly string[], { from: string[]; forms: string[][] }>();

function spellingsFor(secrets: readonly string[]): string[][] {
  const kept = spelledLists.get(secrets);
  if (kept && kept.from.length === secrets.length && kept.from.every((s, i) => s === secrets[i])) return kept.forms;
  const forms = secrets.map((s) => (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH ? spellings(s) : []));
  spelledLists.set(secrets, { from: [...secrets], forms });
  return forms;
}

export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  if (secrets.length > 0) {
    for (const forms of spellingsFor(secrets)) {
      for (const form of forms) {
        if (out.includes(form)) out = out.replace(new RegExp(escapeRegExp(form), 'g'), REDACTED);
      }
    }
  }
  // Each pattern runs only on a text holding what its every match must contain (a text without a secret is
  // returned as it is, without five scans of it): a JWT starts `eyJ`, userinfo follows `://`, a JSON field has
  // quotes, a form field `=`; `Bearer` in any letter case is left to its own pattern.
  if (out.includes('eyJ')) out = out.replace(JWT, REDACTED);
  out = out.replace(BEARER, `$1 ${REDACTED}`);
  if (out.includes('://')) out = out.replace(USERINFO, `$1${REDACTED}@`);
  if (out.includes('"')) out = out.replace(JSON_SECRET_FIELD, `$1"${REDACTED}"`);
  if (out.includes('=')) out = out.replace(FORM_SECRET_FIELD, `$1${REDACTED}`);
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
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      SECRET_KEYS.has(k.toLowerCase()) && v !== null && v !== undefined && v !== ''
        ? REDACTED
        : walk(v, secrets, depth + 1, seen);
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

/**
 * The secrets configured in this Node-RED (lh-server passwords and instrument tokens), so that the redaction step
 * can take them out of any text, whichever node produced it. Each lh-server node adds its own while it is deployed.
 */
const byOwner = new Map<string, string[]>();
let all: string[] = [];

export function rememberSecrets(owner: string, secrets: (string | undefined)[]): void {
  byOwner.set(
    owner,
    secrets.filter((s): s is string => typeof s === 'string' && s !== ''),
  );
  all = [...new Set([...byOwner.values()].flat())].sort((a, b) => b.length - a.length);
}

export function forgetSecrets(owner: string): void {
  if (!byOwner.delete(owner)) return;
  all = [...new Set([...byOwner.values()].flat())].sort((a, b) => b.length - a.length);
}

/** The text without any configured secret, token, JWT or URL userinfo. */
export function redact(text: string): string {
  return redactText(text, all);
}

/** A copy of the value without any secret; `extra` adds secrets that are not configured (e.g. typed into a dialog). */
export function redactDeep<T>(value: T, extra: (string | undefined)[] = []): T {
  const more = extra.filter((s): s is string => typeof s === 'string' && s !== '');
  return redactValue(value, more.length > 0 ? [...more, ...all].sort((a, b) => b.length - a.length) : all);
}

export function redactErr<E extends Error>(err: E): E {
  return redactError(err, all);
}
