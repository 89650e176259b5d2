import { asLhError, ClientOptions, LhError, LiquidHandlerClient } from '../../client';

export interface CheckResult {
  name: 'A' | 'login' | 'B';
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
        checks.push({ name: 'login', ok: true, message: `logged in as "${options.credentials?.username ?? ''}"` });
      } catch (err) {
        checks.push({ name: 'login', ok: false, message: asLhError(err, 'authenticate').message });
        return { ok: false, checks };
      }
    } else {
      checks.push({ name: 'login', ok: true, message: 'no user name configured: requests are sent without a login' });
    }
    if (client.hasInstrumentInterface) {
      try {
        const registered = await client.instrument.isErrorHandlerRegistered();
        checks.push({
          name: 'B',
          ok: true,
          message: `instrument control interface answers (error handler ${registered ? 'registered' : 'not registered'})`,
        });
      } catch (err) {
        checks.push({ name: 'B', ok: false, message: asLhError(err, 'check-error-handler').message });
      }
    }
    return { ok: checks.every((c) => c.ok), checks };
  } finally {
    await client.close();
  }
}

/** Any HTTP answer from A, even 401, proves the address, TLS and API path are right. */
async function reach(client: LiquidHandlerClient): Promise<CheckResult> {
  try {
    await client.prep.probe();
  } catch (err) {
    const e = asLhError(err, 'check-authentication');
    const answered = e instanceof LhError && e.statusCode !== undefined && e.statusCode !== 404 && e.kind !== 'response';
    if (!answered) {
      const hint = e.statusCode === 404 ? ': the API was not found there; check the path prefix of the base URL (e.g. /NimbusLite)' : '';
      return { name: 'A', ok: false, message: `${e.message}${hint}` };
    }
  }
  return { name: 'A', ok: true, message: `preparation service answers at ${client.baseUrl}` };
}
