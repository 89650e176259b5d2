import Redis, { Cluster, RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'tls';

import { CoordinationSettings } from './config';

export interface RedisCredentials {
  username?: string;
  password?: string;
}

/** A connection to the coordination Redis, as the coordinator and stores use it. */
export type CoordinationRedis = Redis | Cluster;

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
  const nodes = settings.urls.map((raw) => {
    const u = new URL(raw);
    return { host: u.hostname, port: Number(u.port || 6379) };
  });
  if (settings.mode === 'cluster') return new Cluster(nodes, { redisOptions: base, enableOfflineQueue: false });
  if (settings.mode === 'sentinel')
    return new Redis({
      ...base,
      sentinels: nodes,
      name: settings.sentinelName,
      sentinelPassword: credentials.password || undefined,
      db: settings.database,
    });
  const u = new URL(settings.urls[0]);
  return new Redis({ ...base, host: u.hostname, port: Number(u.port || 6379), db: settings.database });
}
