/** HS256 JSON Web Tokens with node:crypto only. */
import { createHmac, timingSafeEqual } from 'crypto';

export interface JwtClaims {
  nameid: string;
  given_name: string;
  role: string[];
  iat?: number;
  nbf?: number;
  exp: number;
  jti: string;
  [claim: string]: unknown;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export function signJwt(claims: JwtClaims, secret: Buffer): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify(claims));
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** The claims when the signature is valid and the header says HS256; undefined otherwise (expiry not checked here). */
export function verifyJwt(token: string, secret: Buffer): JwtClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [header, payload, signature] = parts;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url'));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const h: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    if (typeof h !== 'object' || h === null || (h as Record<string, unknown>).alg !== 'HS256') return undefined;
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) return undefined;
    const c = claims as Record<string, unknown>;
    if (typeof c.jti !== 'string' || typeof c.exp !== 'number' || typeof c.nameid !== 'string') return undefined;
    return claims as JwtClaims;
  } catch {
    return undefined;
  }
}
