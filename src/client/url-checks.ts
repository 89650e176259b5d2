/**
 * What the two configured addresses must be, checked before anything is sent: http(s) URLs without a user name or
 * password in them (those belong in the credentials, and would show up in every message that names the URL), no query
 * or fragment (the API's paths are added after the URL), and B
 * over HTTPS, as its bearer token would otherwise travel in clear.
 */
import { LhError } from './errors';

export interface UrlCheckInput {
  baseUrl: string;
  instrumentUrl?: string;
  /** Lets B run over plain http:// (tests against a plain-HTTP stand-in only). */
  allowInsecureInstrument?: boolean;
}

function configError(field: string, message: string): LhError {
  return new LhError(message, { kind: 'config', operation: 'configure', field });
}

/** The URL as it may be shown: scheme, host and path, never userinfo, query or fragment. */
function shown(url: URL): string {
  return `${url.protocol}//${url.username || url.password ? '***@' : ''}${url.host}${url.pathname}`;
}

function parse(field: string, value: unknown): URL {
  const text = typeof value === 'string' ? value.trim() : '';
  let url: URL | undefined;
  try {
    url = /^https?:\/\/[^/\s]+/i.test(text) ? new URL(text) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) {
    // A string that is not a URL may still hold a password (user:pw@host): only its kind is shown.
    const what =
      text === '' ? 'an empty value' : /@/.test(text) ? 'a value that is not a URL' : JSON.stringify(text.slice(0, 80));
    throw configError(field, `${field} must be an http:// or https:// URL (got ${what})`);
  }
  if (url.username !== '' || url.password !== '') {
    throw configError(
      field,
      `${field} must not contain a user name or password (${shown(url)}): enter them as the lh-server node's credentials`,
    );
  }
  if (/[?#]/.test(text)) {
    // the API's paths go after the URL, so a query never reaches the instrument as meant (every request fails); and
    // an unnamed lh-server is named by its URL, in every msg, state topic and metric label: a key there would leak
    throw configError(
      field,
      `${field} must not contain a query (?…) or fragment (#…) (${shown(url)}): the API's paths are added after it; ` +
        "a key or token belongs in the lh-server node's credentials",
    );
  }
  return url;
}

/** Throws a config error naming the field and the rule; never echoes a password. */
export function checkUrls(input: UrlCheckInput): void {
  parse('baseUrl', input.baseUrl);
  if (!input.instrumentUrl) return;
  const b = parse('instrumentUrl', input.instrumentUrl);
  if (b.protocol !== 'https:' && input.allowInsecureInstrument !== true) {
    throw configError(
      'instrumentUrl',
      `instrumentUrl must be an https:// URL (got ${shown(b)}): over http:// the token of interface B would travel in clear. ` +
        'For a test stand-in only, tick "allow unencrypted B (tests only)" in the lh-server node',
    );
  }
}
