/** Content-type rules of the two interfaces. */
import { HttpProblem } from './problem';

/** Which body an endpoint takes. 'vector' is interface B's `application/json; x-api-version=3.0`. */
export type BodyKind = 'none' | 'json' | 'json-patch' | 'vector';

export const A_RESPONSE_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
export const B_MEDIA_TYPE = 'application/json; x-api-version=3.0';
export const B_PROBLEM_TYPE = 'application/problem+json; x-api-version=3.0';

export interface MediaType {
  essence: string;
  params: Record<string, string>;
}

export function parseMediaType(header: string | undefined): MediaType | undefined {
  if (!header) return undefined;
  const [head, ...rest] = header.split(';');
  const essence = head.trim().toLowerCase();
  if (!essence.includes('/')) return undefined;
  const params: Record<string, string> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    params[part.slice(0, eq).trim().toLowerCase()] = part
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { essence, params };
}

/** The types ASP.NET's JSON input formatter accepts (observed real behaviour: the default mode of the simulator). */
function isLenientJson(essence: string): boolean {
  return essence === 'application/json' || essence === 'text/json' || /^application\/[a-z0-9.+-]*\+json$/.test(essence);
}

/**
 * Throws 415 unless `contentType` fits the endpoint. A: any JSON type, as a real instrument (lenient, the default),
 * or in strict mode the exact type of interfaces.md (parameters such as charset allowed). B: application/json with
 * x-api-version=3.0.
 */
export function checkMediaType(kind: BodyKind, contentType: string | undefined, lenient: boolean): void {
  if (kind === 'none') return;
  const mt = parseMediaType(contentType);
  const sent = contentType ? `'${contentType}'` : 'no Content-Type';
  if (kind === 'vector') {
    if (mt?.essence === 'application/json' && mt.params['x-api-version'] === '3.0') return;
    throw new HttpProblem(415, `This operation takes '${B_MEDIA_TYPE}'; the request had ${sent}.`);
  }
  const expected = kind === 'json' ? 'application/json' : 'application/json-patch+json';
  if (mt && (mt.essence === expected || (lenient && isLenientJson(mt.essence)))) return;
  throw new HttpProblem(415, `This operation takes '${expected}'; the request had ${sent}.`);
}
