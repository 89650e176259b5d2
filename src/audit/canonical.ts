import crypto, { createHmac } from 'crypto';

/**
 * The one JSON spelling of a value that the hash chain covers: object keys sorted, no whitespace, undefined
 * properties left out (as JSON.stringify does), so the same record always hashes the same on every Node.js.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  // loops and one string, not map/filter/join: this runs for every record sealed (profiled on the audit path)
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${out}}`;
}

/** crypto.hash (Node.js 20.12+, 21.7+): one call, no Hash object; createHash on older versions. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;

export function sha256Hex(text: string | Buffer): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

export function hmacHex(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

/** The previous hash of the first record of a chain. */
export const GENESIS = '0'.repeat(64);
