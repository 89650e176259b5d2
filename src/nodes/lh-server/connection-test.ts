import { isIP } from 'net';
import tls from 'tls';

import {
  asLhError,
  type AuthResult,
  type ClientOptions,
  describeExpiry,
  LhError,
  LiquidHandlerClient,
  passwordExpiryOf,
} from '../../client';
import { simulatorTlsOptions } from '../shared/tls-config';

export interface CheckResult {
  name: 'A' | 'login' | 'instrument' | 'B';
  ok: boolean;
  message: string;
}

export interface ConnectionReport {
  ok: boolean;
  checks: CheckResult[];
}

/**
 * Tells in plain words whether interface A answers, whether the login works and whether interface B answers,
 * with a fresh client so it counts as exactly one user-initiated login attempt.
 */
export async function testConnection(options: ClientOptions): Promise<ConnectionReport> {
  const checks: CheckResult[] = [];
  let client: LiquidHandlerClient | undefined;
  try {
    client = new LiquidHandlerClient({ ...options, retries: 0 });
  } catch (err) {
    return { ok: false, checks: [{ name: 'A', ok: false, message: asLhError(err, 'configure').message }] };
  }
  try {
    const reachable = await reach(client);
    checks.push(reachable);
    if (!reachable.ok) return { ok: false, checks };
    if (client.session.usesLogin) {
      try {
        await client.session.token();
        await client.prep.checkAuthentication(); // the session's health check: the service accepts the token
        const expiry = client.session.passwordExpiry;
        const user = options.credentials?.username ?? '';
        const expires = expiry?.warn ? `; ${describeExpiry(expiry, user)}` : '';
        checks.push({
          name: 'login',
          ok: true,
          message: `logged in as "${user}" (check-authentication accepted the session)${expires}`,
        });
      } catch (err) {
        checks.push({ name: 'login', ok: false, message: asLhError(err, 'authenticate').message });
        return { ok: false, checks };
      }
    } else {
      checks.push({ name: 'login', ok: true, message: 'no user name configured: requests are sent without a login' });
    }
    checks.push(await identify(client));
    if (client.hasInstrumentInterface) {
      try {
        const registered = await client.instrument.isErrorHandlerRegistered();
        checks.push({
          name: 'B',
          ok: true,
          message: `instrument control interface answers (error handler ${registered ? 'registered' : 'not registered'})`,
        });
      } catch (err) {
        const e = asLhError(err, 'check-error-handler');
        const hint = httpsServerHint(e, options.instrumentUrl) || (await simulatorCaHint(e, options));
        checks.push({ name: 'B', ok: false, message: `${e.message}${hint}` });
      }
    }
    return { ok: checks.every((c) => c.ok), checks };
  } finally {
    await client.close();
  }
}

/**
 * An http:// URL whose server closed the connection on the request without a word (ECONNRESET, "socket hang up"): what
 * a server that speaks only HTTPS there does with plain HTTP. A hint for the editor's check, '' otherwise.
 */
function httpsServerHint(e: LhError, url: string | undefined): string {
  if (e.kind !== 'network' || e.code !== 'ECONNRESET' || !/^http:/i.test(url ?? '')) return '';
  return '. If the server there speaks HTTPS, write the URL with https://';
}

/** The codes of a certificate no CA the client was given vouches for (a self-signed one, or one of an unknown CA). */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/**
 * B's certificate not trusted, and it is the lh-simulator's (a TLS handshake with the bundled test CA verifies it; no
 * request is sent): the option that trusts it, which a new lh-server node has off. '' otherwise.
 */
async function simulatorCaHint(e: LhError, options: ClientOptions): Promise<string> {
  if (e.kind !== 'tls' || !UNTRUSTED.has(e.code) || !options.instrumentUrl) return '';
  let url: URL;
  try {
    url = new URL(options.instrumentUrl);
  } catch {
    return '';
  }
  if (url.protocol !== 'https:') return '';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const verified = await new Promise<boolean>((resolve) => {
    const socket = tls.connect({
      ...simulatorTlsOptions(),
      host,
      port: Number(url.port || 443),
      servername: isIP(host) ? undefined : host,
      timeout: 3000,
    });
    const end = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('secureConnect', () => end(socket.authorized));
    socket.once('error', () => end(false));
    socket.once('timeout', () => end(false));
  });
  return verified
    ? `. The certificate there is the lh-simulator's: tick "Trust the bundled lh-simulator test CA" in this lh-server node, with no TLS configuration selected (for the simulator only)`
    : '';
}

/** Any HTTP answer from A, even 401, proves the address, TLS and API path are right. */
async function reach(client: LiquidHandlerClient): Promise<CheckResult> {
  try {
    await client.prep.probe();
  } catch (err) {
    const e = asLhError(err, 'check-authentication');
    const answered = e instanceof LhError && e.statusCode !== undefined && e.statusCode !== 404 && e.kind !== 'response';
    if (!answered) {
      const hint =
        e.statusCode === 404
          ? ': the API was not found there; check the path prefix of the base URL (e.g. /NimbusLite)'
          : httpsServerHint(e, client.baseUrl);
      return { name: 'A', ok: false, message: `${e.message}${hint}` };
    }
  }
  return { name: 'A', ok: true, message: `preparation service answers at ${client.baseUrl}` };
}

/** Name, serial number and software versions, where the instrument tells them (informational: never fails the test). */
async function identify(client: LiquidHandlerClient): Promise<CheckResult> {
  try {
    const [info, versions] = await Promise.all([client.machine.info(), client.machine.softwareVersions()]);
    if (!info && !versions)
      return { name: 'instrument', ok: true, message: 'the instrument does not tell its name or software versions' };
    const name = [info?.instrumentName, info?.serialNumber && `serial ${info.serialNumber}`].filter(Boolean).join(', ');
    const soft = (versions ?? []).map((v) => `${v.name} ${v.version}`.trim()).join(', ');
    return { name: 'instrument', ok: true, message: [name, soft && `software: ${soft}`].filter(Boolean).join('; ') };
  } catch (err) {
    return {
      name: 'instrument',
      ok: true,
      message: `name and software versions not read: ${asLhError(err, 'instruments').message}`,
    };
  }
}

/** What setup-wizard or kba-password-reset did, in plain words, without the token the instrument answered with. */
export function accountActionMessage(action: 'setup-wizard' | 'kba-password-reset', result: AuthResult): string {
  const user = typeof result.userName === 'string' && result.userName !== '' ? result.userName : 'the first user';
  const done =
    action === 'setup-wizard'
      ? `setup completed on the instrument: "${user}" can log in`
      : `password reset accepted by the instrument for "${user}" (the answers were checked on its screen)`;
  const expiry = passwordExpiryOf(result, Date.now());
  return `${done}. Enter the user and password in this lh-server node and deploy${expiry?.warn ? `; ${describeExpiry(expiry, user)}` : ''}`;
}
