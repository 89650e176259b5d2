import Redis, { Cluster } from 'ioredis';

import { addressOf } from '../coordination/connect';
import { CoordinationKeys } from '../coordination/keys';
import { type AuditStreamKeys } from './redis-log';

/** What `lh-audit verify|export redis://...` reads: which Redis, which prefix, one instrument or all of them. */
export interface RedisSource {
  host: string;
  port: number;
  db: number;
  tls: boolean;
  username?: string;
  password?: string;
  prefix: string;
  /** The instrument's identity (`<A URL>|<B URL>`, as lh-server names it) or its 24-hex id; undefined: every one. */
  instrument?: string;
}

export function isRedisUrl(text: string): boolean {
  return /^rediss?:\/\//i.test(text);
}

/**
 * The URL as it may be printed: never its password. Everything up to the last @ goes: a password with an unescaped
 * / # ? or @ does not end where a URL parser would say (and such a URL does not parse, so its error quotes it).
 */
export function safeRedisUrl(text: string): string {
  return text.replace(/\/\/[^]*@/, '//…@');
}

/** `redis[s]://[user:password@]host[:port][/db]?prefix=labwire[&instrument=<identity or id>]` */
export function parseRedisSource(text: string, env: NodeJS.ProcessEnv = process.env): RedisSource {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`${safeRedisUrl(text)} is not a URL (redis://host:6379/0?prefix=labwire&instrument=...)`);
  }
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new Error(`the database in ${safeRedisUrl(text)} must be a number`);
  const prefix = u.searchParams.get('prefix') ?? 'labwire';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) throw new Error('prefix: letters, digits and - _ . : only, 1 to 64 characters');
  const instrument = u.searchParams.get('instrument') ?? undefined;
  return {
    ...addressOf(text), // an IPv6 literal without its brackets
    db: Number(db || 0),
    tls: u.protocol === 'rediss:',
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : env.LH_AUDIT_REDIS_PASSWORD || undefined,
    prefix,
    instrument: instrument === '' ? undefined : instrument,
  };
}

/** The stream keys of one instrument named by its identity or by its id (the hex part of its keys). */
export function streamKeysOf(prefix: string, instrument: string): AuditStreamKeys {
  const keys = new CoordinationKeys(prefix);
  const k = /^[0-9a-f]{24}$/.test(instrument) ? keys.instrumentById(instrument) : keys.instrument(instrument);
  return { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
}

/** A connection for one command: one attempt, no reconnect loop (the command reports the error and exits). */
export function connectSource(source: RedisSource): Redis {
  return new Redis({
    host: source.host,
    port: source.port,
    db: source.db,
    username: source.username,
    password: source.password,
    tls: source.tls ? {} : undefined,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    retryStrategy: () => null,
  });
}

/**
 * The connection to read with: the one made, or, when that Redis is a Cluster node, a Cluster connection through it
 * (a single connection would be refused the keys of other masters, and would SCAN its own master only: chains on the
 * others would be left out without a word).
 */
export async function openSource(redis: Redis, source: RedisSource): Promise<Redis | Cluster> {
  const info = await redis.info('cluster').catch(() => '');
  if (!/^cluster_enabled:1/m.test(info)) return redis;
  redis.disconnect();
  const { host, port, ...options } = redis.options;
  const cluster = new Cluster([{ host: host ?? source.host, port: port ?? source.port }], {
    redisOptions: { ...options, lazyConnect: false },
    clusterRetryStrategy: () => null,
    enableOfflineQueue: true,
  });
  cluster.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    cluster.once('ready', () => resolve());
    cluster.once('end', () => reject(new Error(`cannot connect to the Redis Cluster at ${source.host}:${source.port}`)));
  });
  return cluster;
}

/**
 * The chains to read: the one instrument named, or every chain under the prefix (on every master), found by any of
 * its keys: a chain whose stream was deleted while its head or signed checkpoint stayed is listed (and fails verify),
 * not left out without a word.
 */
export async function sourceStreams(redis: Redis | Cluster, source: RedisSource): Promise<AuditStreamKeys[]> {
  if (source.instrument !== undefined) return [streamKeysOf(source.prefix, source.instrument)];
  const found = new Set<string>();
  for (const node of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${source.prefix}:i:{*}:audit*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) {
        const id = /:i:\{([0-9a-f]{24})\}:audit(?::head|:checkpoint)?$/.exec(k)?.[1];
        if (id !== undefined) found.add(id);
      }
    } while (cursor !== '0');
  }
  return [...found].sort().map((id) => streamKeysOf(source.prefix, id));
}
