/**
 * The lh-coordination node's settings, checked: a clear error naming the field and the rule, never a guess. The
 * password is a credential: a URL carrying one (`redis://:pw@host`) is refused, so it cannot end up in flows.json.
 * Pure (no Node.js modules): the edit dialog checks its fields with this same function.
 */
import { DATABASE_RULE, databaseOfUrl } from './database';
import { validPrefix } from './prefix';

export interface CoordinationSettings {
  /** redis:// or rediss:// (TLS) URLs; several for Sentinel (`mode: 'sentinel'`) or Cluster (`mode: 'cluster'`) */
  urls: string[];
  mode: 'single' | 'sentinel' | 'cluster';
  /** the Sentinel master group name */
  sentinelName: string;
  prefix: string;
  leaseMs: number;
  /** the Redis database the URLs' path names (0 when none); Cluster has database 0 only */
  database: number;
}

export class CoordinationConfigError extends Error {
  constructor(
    readonly field: string,
    /** the rule the value broke, without the field's name */
    readonly rule: string,
  ) {
    super(`lh-coordination ${field}: ${rule}`);
    this.name = 'CoordinationConfigError';
  }
}

export const DEFAULT_PREFIX = 'labwire';
export const DEFAULT_LEASE_SECONDS = 5;
export const MIN_LEASE_SECONDS = 1;
export const MAX_LEASE_SECONDS = 120;

function userInfoError(): CoordinationConfigError {
  return new CoordinationConfigError(
    'url',
    'no user name or password in the URL: put them in the Username and Password fields (credentials)',
  );
}

function parseUrl(raw: string): { url: string; database: number } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CoordinationConfigError('url', `"${raw}" is not a URL (redis://host:6379 or rediss://host:6380)`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new CoordinationConfigError('url', 'must start with redis:// or rediss:// (TLS)');
  if (u.password !== '' || u.username !== '') throw userInfoError();
  // only host, port and database number are read: a query (?password=…) would be ignored, and stay in flows.json
  if (/[?#]/.test(raw))
    throw new CoordinationConfigError(
      'url',
      'no query or fragment in the URL (only host, port and database number are read): a password goes in the Password field (credentials)',
    );
  if (u.hostname === '') throw new CoordinationConfigError('url', 'names no host');
  const database = databaseOfUrl(raw);
  if (database === undefined) throw new CoordinationConfigError('url', `"${raw}": ${DATABASE_RULE}`);
  return { url: raw.trim(), database };
}

/** The settings of a saved lh-coordination configuration; throws CoordinationConfigError naming the bad field. */
export function coordinationSettings(config: Record<string, unknown>): CoordinationSettings {
  const field = String(config.url ?? '');
  // before any piece is parsed or shown: a password with a `/`, `#` or `?` in it ends the host early (so the URL may
  // even parse, with the password in its path), and a `,` or a space splits the field into pieces, each echoed
  if (field.includes('@')) throw userInfoError();
  const parsed = field
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map(parseUrl);
  const urls = parsed.map((p) => p.url);
  if (urls.length === 0) throw new CoordinationConfigError('url', 'is required (redis://host:6379)');
  const mode = config.mode === 'sentinel' || config.mode === 'cluster' ? config.mode : 'single';
  if (mode === 'single' && urls.length > 1)
    throw new CoordinationConfigError('url', 'one URL only, unless the mode is sentinel or cluster');
  const database = parsed[0].database;
  if (parsed.some((p) => p.database !== database))
    throw new CoordinationConfigError('url', 'every URL names the same database number (or none)');
  if (mode === 'cluster' && database !== 0)
    throw new CoordinationConfigError('url', 'Redis Cluster has database 0 only: no database number in the URLs');
  const sentinelName = String(config.sentinelName ?? '').trim();
  if (mode === 'sentinel' && sentinelName === '')
    throw new CoordinationConfigError('sentinelName', 'is required in sentinel mode (the master group name)');
  const rawPrefix = config.prefix === undefined || config.prefix === '' ? DEFAULT_PREFIX : config.prefix;
  const prefix = validPrefix(rawPrefix);
  if (!prefix) throw new CoordinationConfigError('prefix', 'letters, digits and - _ . : only, 1 to 64 characters');
  const seconds =
    config.leaseSeconds === undefined || config.leaseSeconds === '' ? DEFAULT_LEASE_SECONDS : Number(config.leaseSeconds);
  if (!Number.isFinite(seconds) || seconds < MIN_LEASE_SECONDS || seconds > MAX_LEASE_SECONDS) {
    throw new CoordinationConfigError('leaseSeconds', `a number of seconds from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS}`);
  }
  return { urls, mode, sentinelName, prefix, leaseMs: Math.round(seconds * 1000), database };
}
