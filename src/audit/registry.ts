import { randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';

import { auditBus, type AuditProblem } from './bus';
import { sha256Hex } from './canonical';
import { chainName } from './files';
import { AuditLog } from './log-file';
import { OutcomeOrder } from './outcome-order';
import { type Actor, type ChainGap } from './record';
import { type AuditRedis, type AuditStreamKeys, RedisAuditLog } from './redis-log';
import { type AuditAppender, AuditTrail } from './trail';

/** `lhAudit` in Node-RED's settings.js. */
export interface AuditSettings {
  /** false switches the audit trail off (the default is on wherever Node-RED has a user dir). */
  enabled?: boolean;
  /** Where the chains go (default `<userDir>/lh-audit`). */
  dir?: string;
  /** The checkpoint signing key (text, e.g. from an environment variable), or a file holding it. */
  key?: string;
  keyFile?: string;
  /**
   * With lh-coordination (the chain in Redis): the key used before `key`/`keyFile`, during a key rotation. A replica
   * chains only on a head whose checkpoint its key signed; with this, also on one the previous key signed.
   */
  previousKey?: string;
  /** A chain file is continued in a new one at this size (default 64 MiB, at most 256 MiB: MAX_FILE_BYTES_LIMIT). */
  maxFileBytes?: number;
  /** false: no fsync before a request is sent (not for regulated use). Default true. */
  fsync?: boolean;
  /**
   * How the intent is made durable: 'datasync' (default: write + fdatasync through the thread pool), 'dsync' (an
   * O_DSYNC file: one thread-pool round trip), 'sync' (on the main thread: the lowest wait on a loaded machine, but
   * every flow of this Node-RED waits for the disk meanwhile). See `bench/audit-where.ts`.
   */
  writeMode?: 'datasync' | 'dsync' | 'sync';
  /**
   * With an lh-coordination node (the chain in a Redis stream): also wait for this many Redis replicas to
   * acknowledge each record (Redis WAIT) before the request is sent. Default 0 (Redis' own acknowledgement).
   */
  redisWaitReplicas?: number;
  /** How long to wait for them (default 1000 ms); fewer acknowledgements fail the record: the request is not sent. */
  redisWaitTimeoutMs?: number;
}

export const KEY_FILE_NAME = 'lh-audit.key';

/**
 * The largest `lhAudit.maxFileBytes`: a chain file is read whole, as one string, by `lh-audit verify` and by Node-RED
 * when it reopens the chain, and V8 makes no string of 512 MiB or more (a file past it could be neither verified nor
 * written on after a restart). Half of that leaves room for the batch that passes the size.
 */
export const MAX_FILE_BYTES_LIMIT = 256 * 1024 * 1024;

/** `lhAudit.maxFileBytes` checked: undefined (the default), or a whole number of bytes from 1 to the limit. */
export function auditMaxFileBytes(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_FILE_BYTES_LIMIT) return value;
  throw new Error(
    `lhAudit.maxFileBytes in settings.js must be a whole number of bytes from 1 to ${MAX_FILE_BYTES_LIMIT} (256 MiB: a ` +
      `chain file is read whole by lh-audit verify and when Node-RED reopens the chain), not ${String(JSON.stringify(value)).slice(0, 40)}`,
  );
}

interface Shared {
  log: AuditAppender;
  /** the chain's order of outcomes and intents, shared by the trails of every lh-server node writing it */
  order: OutcomeOrder;
  users: number;
}

export interface AuditUse {
  trail: AuditTrail;
  /** The chain's first file (for a person to verify). */
  path: string;
  release(): Promise<void>;
}

function problem(instrument: string, kind: AuditProblem['kind'], message: string): AuditProblem {
  return { instrument, kind, message };
}

/** The checkpoint key: configured, or made once (random, mode 0600) beside the chains. */
export function auditKey(settings: AuditSettings, dir: string): Buffer {
  if (typeof settings.key === 'string' && settings.key !== '') return Buffer.from(settings.key, 'utf8');
  const file = settings.keyFile ?? path.join(dir, KEY_FILE_NAME);
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || settings.keyFile) throw err;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('hex');
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return Buffer.from(key, 'utf8');
}

/** The configured checkpoint key, if any (a Redis chain never makes one: every replica must be given the same). */
export function configuredAuditKey(settings: AuditSettings): Buffer | undefined {
  if (typeof settings.key === 'string' && settings.key !== '') return Buffer.from(settings.key, 'utf8');
  if (settings.keyFile) return Buffer.from(fs.readFileSync(settings.keyFile, 'utf8').trim(), 'utf8');
  return undefined;
}

/**
 * The audit chains of one instrument's lh-server nodes in this process: a chain file (or a Redis stream) is written
 * by one writer, whichever of them records. Held by the instrument's home (src/instrument): no module-level state.
 */
export class AuditChains {
  /** one log per chain file, whichever lh-server nodes of the instrument use it */
  private readonly files = new Map<string, Shared>();
  /** chain files being closed: a new writer of the same chain starts after the old one finished */
  private readonly closing = new Map<string, Promise<void>>();
  /** Redis chains per connection and stream */
  private readonly streams = new Map<AuditRedis, Map<string, Shared>>();
  /** Redis chains still closing, per connection */
  private readonly streamsClosing = new Map<AuditRedis, Set<Promise<void>>>();
  /** who waits for a Redis chain to finish closing (redisAuditReleased) */
  private waiters: (() => void)[] = [];

  /**
   * The audit trail of the instrument in a chain file, or undefined when auditing is off. `instrument` identifies the
   * chain (the instrument's URLs); `fallback` names who acts when no node said (the lh-server node).
   */
  useFile(
    settings: AuditSettings | undefined,
    userDir: string | undefined,
    instrument: string,
    fallback: Actor,
    secrets?: () => readonly string[],
  ): AuditUse | undefined {
    const s = settings ?? {};
    if (s.enabled === false) return undefined;
    const dir = s.dir ?? (userDir ? path.join(userDir, 'lh-audit') : undefined);
    if (!dir) return undefined;
    const name = chainName(instrument, sha256Hex(instrument));
    const file = path.join(dir, name);
    const { files, closing } = this;
    let shared = files.get(file);
    if (!shared) {
      const maxFileBytes = auditMaxFileBytes(s.maxFileBytes);
      const log = new AuditLog({
        dir,
        name,
        instrument,
        key: auditKey(s, dir),
        maxFileBytes,
        fsync: s.fsync,
        writeMode: s.writeMode === 'dsync' || s.writeMode === 'sync' ? s.writeMode : undefined,
        after: closing.get(file),
      });
      log.on('record', (record) => auditBus.emit('record', record));
      log.on('broken', (err: Error) => auditBus.emit('problem', problem(instrument, 'refusing', err.message)));
      log.on('gap', (gap: ChainGap) => auditBus.emit('problem', problem(instrument, 'gap', gap.reason)));
      log.on('checkpoint-missing', (text: string) => auditBus.emit('problem', problem(instrument, 'checkpoint', text)));
      shared = { log, order: new OutcomeOrder(), users: 0 };
      files.set(file, shared);
    }
    shared.users++;
    const held = shared;
    let released = false;
    return {
      trail: new AuditTrail(held.log, { instrument, fallback, secrets, order: held.order }),
      path: `${file}.000001.jsonl`,
      async release() {
        if (released) return;
        released = true;
        held.users--;
        if (held.users > 0) return;
        if (files.get(file) === held) files.delete(file);
        const closed = held.log.close();
        closing.set(file, closed);
        await closed.finally(() => {
          if (closing.get(file) === closed) closing.delete(file);
        });
      },
    };
  }

  /**
   * The audit trail of the instrument in a Redis stream shared by every Node-RED of a coordination group (instead of
   * a file per Node-RED), or undefined when auditing is off. The records are emitted (auditBus, lh-audit nodes) by
   * the Node-RED that wrote them only: with an lh-audit node on every replica, each record reaches the flows once.
   * `warn` is told once when the checkpoint cannot be signed (no key configured).
   */
  useRedis(
    settings: AuditSettings | undefined,
    redis: AuditRedis,
    keys: AuditStreamKeys,
    instrument: string,
    fallback: Actor,
    secrets?: () => readonly string[],
    warn?: (text: string) => void,
  ): AuditUse | undefined {
    const s = settings ?? {};
    if (s.enabled === false) return undefined;
    let byStream = this.streams.get(redis);
    if (!byStream) {
      byStream = new Map();
      this.streams.set(redis, byStream);
    }
    const streams = byStream;
    let shared = streams.get(keys.stream);
    if (!shared) {
      const key = configuredAuditKey(s);
      if (!key) {
        warn?.(
          'the audit checkpoints in Redis are not signed: give every Node-RED the same lhAudit.key or lhAudit.keyFile in settings.js',
        );
      }
      const log = new RedisAuditLog({
        redis,
        keys,
        instrument,
        key,
        previousKeys: typeof s.previousKey === 'string' && s.previousKey !== '' ? [Buffer.from(s.previousKey, 'utf8')] : [],
        waitReplicas: Number.isInteger(s.redisWaitReplicas) ? s.redisWaitReplicas : undefined,
        waitTimeoutMs:
          Number.isFinite(s.redisWaitTimeoutMs) && Number(s.redisWaitTimeoutMs) > 0 ? s.redisWaitTimeoutMs : undefined,
      });
      log.on('record', (record) => auditBus.emit('record', record));
      log.on('warning', (text: string) => warn?.(text));
      shared = { log, order: new OutcomeOrder(), users: 0 };
      streams.set(keys.stream, shared);
    }
    shared.users++;
    const held = shared;
    let released = false;
    return {
      trail: new AuditTrail(held.log, { instrument, fallback, secrets, order: held.order }),
      path: keys.stream,
      release: async () => {
        if (released) return;
        released = true;
        held.users--;
        if (held.users > 0) return;
        if (streams.get(keys.stream) === held) streams.delete(keys.stream);
        if (streams.size === 0 && this.streams.get(redis) === streams) this.streams.delete(redis);
        const closing = this.streamsClosing.get(redis) ?? new Set<Promise<void>>();
        this.streamsClosing.set(redis, closing);
        const closed = held.log.close();
        closing.add(closed);
        try {
          await closed;
        } finally {
          closing.delete(closed);
          if (closing.size === 0 && this.streamsClosing.get(redis) === closing) this.streamsClosing.delete(redis);
          for (const wake of this.waiters.splice(0)) wake();
        }
      },
    };
  }

  /** Whether a chain of this instrument uses the connection, or is still closing on it. */
  usesRedis(redis: AuditRedis): boolean {
    return (this.streams.get(redis)?.size ?? 0) > 0 || (this.streamsClosing.get(redis)?.size ?? 0) > 0;
  }

  /** Resolves once a Redis chain of this instrument finished closing. */
  closedOne(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/**
 * Resolves once no audit chain of `chains` (every instrument of this process) uses the connection any more (every
 * lh-server node released its trail and its last records were written): the lh-coordination node waits for it
 * before it closes the connection, so the outcome records of requests still in flight at a redeploy reach the stream.
 */
export async function redisChainsReleased(redis: AuditRedis, chains: () => Iterable<AuditChains>): Promise<void> {
  for (;;) {
    const busy = [...chains()].filter((c) => c.usesRedis(redis));
    if (busy.length === 0) return;
    await Promise.race(busy.map((c) => c.closedOne()));
  }
}
