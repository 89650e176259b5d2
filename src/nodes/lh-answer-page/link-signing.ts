/**
 * Signed answer links: the claims (instrument, error, expiry) as base64url JSON, then an HMAC-SHA256 over that
 * text with the node's secret. Anything altered, forged or expired is refused; nothing about why leaks beyond
 * the reason code for the log.
 */
import { createHash, createHmac, timingSafeEqual } from 'crypto';

export interface LinkClaims {
  /** the instrument (a short digest of the lh-server node's URLs) */
  i: string;
  /** A or B */
  s: 'A' | 'B';
  /** the error's id (A) or uuid (B) */
  e: string;
  /** expiry, ms since the epoch */
  x: number;
  /** the error's identity when the link was made (fingerprint of title, time stamp, group, severity); older links lack it */
  f?: string;
}

export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

const MAX_TOKEN_LENGTH = 2000;

/** A short, stable name of an instrument for links: its URLs do not appear in them. */
export function instrumentDigest(instrumentKey: string): string {
  return createHash('sha256').update(instrumentKey).digest('base64url').slice(0, 16);
}

function mac(secret: string, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest();
}

export function signLink(claims: LinkClaims, secret: string): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(secret, body).toString('base64url')}`;
}

function isClaims(value: unknown): value is LinkClaims {
  if (!value || typeof value !== 'object') return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.i === 'string' &&
    (c.s === 'A' || c.s === 'B') &&
    typeof c.e === 'string' &&
    c.e !== '' &&
    typeof c.x === 'number' &&
    (c.f === undefined || typeof c.f === 'string')
  );
}

/** True when the token carries a valid signature by `secret` (expired or not). */
export function signedBy(token: unknown, secret: string): boolean {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return false;
  const parts = token.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]) || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return false;
  const given = Buffer.from(parts[1], 'base64url');
  const expected = mac(secret, parts[0]);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function verifyLink(token: unknown, secret: string, now: number): LinkCheck {
  if (typeof token !== 'string' || token.split('.').length !== 2) return { ok: false, reason: 'malformed' };
  if (!signedBy(token, secret)) return { ok: false, reason: 'signature' };
  const parts = token.split('.');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!isClaims(claims)) return { ok: false, reason: 'malformed' };
  if (claims.x <= now) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}

/**
 * Why no answer page on the path took a link: cut or mangled (malformed), or signed with a secret none of them has
 * now (signature: a node deleted or replaced, its secret or the link key changed, another Node-RED's link).
 */
export function unownedReason(token: unknown): 'malformed' | 'signature' {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return 'malformed';
  const parts = token.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]) || !/^[A-Za-z0-9_-]{43}$/.test(parts[1])) return 'malformed';
  try {
    return isClaims(JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'))) ? 'signature' : 'malformed';
  } catch {
    return 'malformed';
  }
}
