import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'tls';

import { type CoordinationSettings } from './config';

export interface RedisCredentials {
  username?: string;
  password?: string;
}

/** A connection to the coordination Redis, as the coordinator and stores use it. */
export type CoordinationRedis = Redis | Cluster;

/**
 * The host and port of a coordination URL as a socket takes them: an IPv6 literal without the brackets a URL writes
 * it in (`redis://[::1]:6379` → `::1`; given with them, the host name `[::1]` is looked up in DNS and never found).
 */
export function addressOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 6379) };
}

/**
 * Opens the connection: commands fail at once while it is down (no offline queue, one attempt), so a replica that
 * lost Redis knows it within one round instead of queueing writes it can no longer prove it may make; it keeps
 * reconnecting in the background (back-off up to 2 s). Nothing here needs INFO (a server may refuse it).
 */
export function connectRedis(
  settings: CoordinationSettings,
  credentials: RedisCredentials,
  tls?: ConnectionOptions,
): CoordinationRedis {
  const secure = settings.urls.some((u) => u.startsWith('rediss:')) || tls !== undefined;
  const base: RedisOptions = {
    username: credentials.username || undefined,
    password: credentials.password || undefined,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(1000, settings.leaseMs),
    commandTimeout: Math.max(500, Math.floor(settings.leaseMs / 3)),
    retryStrategy: (times) => Math.min(2000, 100 * times),
    tls: secure ? { ...(tls ?? {}) } : undefined,
    lazyConnect: false,
    // ioredis's ready check is an INFO: a server with INFO renamed away (`rename-command INFO ""`) would never be
    // ready, and coordination would stop; without it a command sent while Redis loads its data fails (LOADING) and
    // the round counts as a blip, as when Redis is down
    enableReadyCheck: false,
  };
  const nodes = settings.urls.map(addressOf);
  if (settings.mode === 'cluster') return new Cluster(nodes, { redisOptions: base, enableOfflineQueue: false });
  if (settings.mode === 'sentinel')
    return new Redis({
      ...base,
      sentinels: nodes,
      name: settings.sentinelName,
      sentinelPassword: credentials.password || undefined,
      db: settings.database,
    });
  return new Redis({ ...base, ...addressOf(settings.urls[0]), db: settings.database });
}

/**
 * What the coordination's log says when Redis evicts keys once it is full (`INFO memory`: a `maxmemory` and a policy
 * other than `noeviction`): it drops the replicas' keys with the others, least recently used first (the memory of
 * errors raised long ago, an answer ledger, an audit chain's checkpoint). Undefined when it does not, or does not say
 * (INFO refused, fields missing). Said once, when the connection is first made; the replicas tell an eviction as a
 * loss of data.
 */
export function evictionWarning(info: string): string | undefined {
  const max = /^maxmemory:(\d+)\s*$/m.exec(info);
  const policy = /^maxmemory_policy:([a-z-]+)\s*$/m.exec(info);
  if (!max || !policy || Number(max[1]) === 0 || policy[1] === 'noeviction') return undefined;
  return (
    `coordination Redis evicts keys when it is full (maxmemory-policy ${policy[1]}, maxmemory ${max[1]} bytes): ` +
    "the replicas' shared memory, answer ledgers and audit chains may go with them (taken as Redis losing its data: " +
    'msgs marked as redelivered, audit gaps); set maxmemory-policy noeviction on this Redis'
  );
}
