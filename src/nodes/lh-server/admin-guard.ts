/**
 * Decisions of the lh-server editor endpoints, without Node-RED: which request bodies they accept, and which
 * credentials a connection test may use. Stored secrets only ever go to the addresses (and TLS settings) of the
 * deployed lh-server node they belong to.
 */
import type { ServerTarget } from '../shared/server-node';

/** What Node-RED's editor shows in a password field whose value is stored and was not retyped. */
export const PASSWORD_PLACEHOLDER = '__PWRD__';

export interface ServerSecrets {
  username?: string;
  password?: string;
  instrumentToken?: string;
}

/** The deployed lh-server node a dialog belongs to, when there is one. */
export interface DeployedServer {
  target: ServerTarget;
  credentials: ServerSecrets;
}

export type CredentialChoice = { ok: true; credentials: ServerSecrets; usesStored: boolean } | { ok: false; message: string };

/**
 * Only `application/json` bodies: an HTML form (the one thing a foreign web page can post without a CORS
 * preflight) sends urlencoded, multipart or text/plain.
 */
export function isJsonContentType(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== 'string') return false;
  return value.split(';')[0].trim().toLowerCase() === 'application/json';
}

type Headers = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Why a read of an editor endpoint is cross-site (then refused), or undefined when it comes from the editor's own
 * origin or from no browser page at all. A browser says where a request comes from: `Sec-Fetch-Site` (same-origin
 * or none = typed by the user; same-site and cross-site are other origins), else `Origin`, compared with the `Host`
 * the request was sent to (never `X-Forwarded-Host`: the editor app grants CORS preflights, so a foreign page could
 * set that header itself). A request with neither (curl, scripts) is not a foreign page's: a page cannot send a
 * cross-origin read without an Origin.
 */
export function crossSiteReason(headers: Headers): string | undefined {
  const site = first(headers['sec-fetch-site'])?.toLowerCase();
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site: ${site}`;
  const origin = first(headers.origin);
  if (origin === undefined) return undefined;
  let host: string;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Origin ${origin}`;
    host = url.host.toLowerCase();
  } catch {
    return `Origin ${origin}`;
  }
  return first(headers.host)?.toLowerCase() === host ? undefined : `Origin ${origin}`;
}

/** The host name of a Host header (no port, no IPv6 brackets), lower case; undefined when there is none. */
function hostName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * Why a request of no logged-in user (without adminAuth, or adminAuth's anonymous `default` user: `adminAuth` true)
 * is refused because of the name it was sent to, or undefined. A foreign page can rebind its own DNS name to this
 * Node-RED's address and is then same-origin for the browser (Host = Origin = its name), so the Origin check alone
 * passes it. The editor is reached by an IP address, `localhost`, or a name the user lists in settings.js
 * (`liquidHandler.editorHosts`); any other name is refused with that advice.
 */
export function rebindingReason(headers: Headers, editorHosts: readonly string[] = [], adminAuth = false): string | undefined {
  const raw = first(headers.host);
  if (raw === undefined) return undefined;
  const parsed = hostName(raw);
  // a name the URL parser refuses (e.g. a bad punycode label) is judged as it is sent: only localhost or a listed name
  const name = parsed ?? raw.trim().toLowerCase().replace(/:\d+$/, '');
  if (parsed !== undefined && (IPV4.test(name) || name.includes(':'))) return undefined;
  if (name === 'localhost' || name.endsWith('.localhost')) return undefined;
  if (editorHosts.some((h) => typeof h === 'string' && h.trim().toLowerCase() === name)) return undefined;
  const remedy = adminAuth ? 'or log in to the editor' : 'or adminAuth';
  return `Host ${name} is not ${parsed === undefined ? 'a valid host name, ' : ''}an address or a listed editor host name (settings.js liquidHandler.editorHosts, ${remedy})`;
}

/** A URL compared by scheme, host, port and path (no trailing slash; case of scheme and host, query and fragment ignored). */
export function normaliseUrl(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') return '';
  try {
    const url = new URL(text);
    // userinfo only marks the URL as different (such URLs are refused anyway): the password is not kept here
    const userinfo = url.username || url.password ? '***@' : '';
    return `${url.protocol}//${userinfo}${url.host}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return text.replace(/\/+$/, '');
  }
}

export function targetOf(config: Record<string, unknown>): ServerTarget {
  return {
    baseUrl: normaliseUrl(config.baseUrl),
    instrumentUrl: normaliseUrl(config.instrumentUrl),
    tls: typeof config.tls === 'string' && config.tls !== '_ADD_' ? config.tls : '',
    simulatorCa: config.simulatorCa === true,
  };
}

export function sameTarget(a: ServerTarget, b: ServerTarget): boolean {
  return a.baseUrl === b.baseUrl && a.instrumentUrl === b.instrumentUrl && a.tls === b.tls && a.simulatorCa === b.simulatorCa;
}

const SECRET_NAMES = ['password', 'instrumentToken'] as const;

/**
 * The credentials a connection test from the edit dialog may use. A secret typed into the dialog is used as
 * given; a secret left as stored (the placeholder, or not sent) comes from the deployed node only when the
 * dialog still points at that node's addresses with its TLS settings; otherwise the test is refused before
 * anything is sent.
 */
export function chooseCredentials(body: Record<string, unknown>, deployed: DeployedServer | undefined): CredentialChoice {
  const dialog = targetOf(body);
  const stored = deployed && sameTarget(deployed.target, dialog) ? deployed.credentials : undefined;
  const credentials: ServerSecrets = {
    username: typeof body.username === 'string' ? body.username : deployed?.credentials.username,
  };
  let usesStored = false;
  for (const name of SECRET_NAMES) {
    const given = body[name];
    if (given !== PASSWORD_PLACEHOLDER && given !== undefined) {
      credentials[name] = typeof given === 'string' && given !== '' ? given : undefined;
      continue;
    }
    const kept = stored?.[name];
    if (kept) {
      credentials[name] = kept;
      usesStored = true;
    } else if (given === PASSWORD_PLACEHOLDER || deployed?.credentials[name]) {
      return { ok: false, message: refusal(name, deployed !== undefined) };
    }
  }
  return { ok: true, credentials, usesStored };
}

function refusal(name: (typeof SECRET_NAMES)[number], deployed: boolean): string {
  const what = name === 'password' ? 'password' : 'token (B)';
  const why = deployed
    ? `the addresses or TLS settings in the dialog differ from the deployed lh-server node, so its stored ${what} is not sent there`
    : `this lh-server node is not deployed, so there is no stored ${what} to use`;
  return `${why}: deploy first, or type the ${what} here`;
}

/**
 * Whether a successful connection test tried the deployed node's own login: the dialog points at its addresses and TLS
 * settings and the user name (in any letter case, as the instrument finds it) and password tested are the ones it holds,
 * typed again or left as stored. Only then may the test free that node's rejected login (a stored B token beside a
 * newly typed password proves nothing of the stored password).
 */
export function testedDeployedLogin(
  body: Record<string, unknown>,
  deployed: DeployedServer | undefined,
  tested: ServerSecrets,
): boolean {
  if (!deployed || !sameTarget(deployed.target, targetOf(body))) return false;
  const held = deployed.credentials;
  return (
    (tested.username ?? '').toLowerCase() === (held.username ?? '').toLowerCase() &&
    (tested.password ?? '') === (held.password ?? '') &&
    Boolean(held.username)
  );
}
