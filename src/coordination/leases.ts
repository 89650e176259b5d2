import { type CoordinationKeys } from './keys';
import { ACQUIRE, EPOCH, EPOCH_ROTATE, GROUP_INSTRUMENTS, HEARTBEAT, HOLDING, RELEASE, RENEW, SEQUENCE } from './scripts';

/** The part of an ioredis client the coordination uses: scripts, and a few plain reads. */
export interface RedisLike {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

/** What an acquire attempt found: the lease ours (token > 0), or someone else's (token 0, holder named). */
export interface LeaseGrant {
  token: number;
  holder: string;
  ttlMs: number;
  /** `<token>:<replica>`: what every fenced write names */
  value: string;
  /** someone else's: the fencing token it holds the lease under */
  heldToken?: number;
  /** ours, new: the fence counter was behind the newest token the replica had seen (Redis lost its data) */
  dataLost?: boolean;
}

/** A refusal from a fenced script: the lease named is not (or no longer) held. Nothing was written. */
export class FencedError extends Error {
  constructor(what: string) {
    super(`${what} refused: this Node-RED no longer holds the instrument's lease (another took over)`);
    this.name = 'FencedError';
  }
}

/** Whether a Redis reply error is a fence refusal. */
export function isFenceReply(err: unknown): boolean {
  return err instanceof Error && /^FENCED\b/.test(err.message);
}

/** Runs a fenced script, turning a fence refusal into a FencedError. */
export async function fenced<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isFenceReply(err)) throw new FencedError(what);
    throw err;
  }
}

/**
 * The margin by which a holder stops trusting a lease (or a lock) of `ttlMs` before Redis expires it: clock drift and
 * the time its renewal takes. A tenth of it, at most a second.
 */
export function leaseSafetyMs(ttlMs: number): number {
  return Math.min(1000, Math.floor(ttlMs / 10));
}

/** The holder's replica name in a lease value (`<token>:<replica>`). */
export function holderOf(value: string | null): string | undefined {
  if (value === null) return undefined;
  const sep = value.indexOf(':');
  return sep < 0 ? undefined : value.slice(sep + 1);
}

/** One lease per instrument, with a fencing token: atomic set-if-absent with expiry, compare-and-extend, release. */
export class Leases {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: CoordinationKeys,
  ) {}

  /** `seenToken`: the newest fencing token this replica has seen for the instrument (the new one is above it). */
  async acquire(instrumentKey: string, replica: string, ttlMs: number, seenToken = 0): Promise<LeaseGrant> {
    const k = this.keys.instrument(instrumentKey);
    const reply = (await this.redis.eval(ACQUIRE, 2, k.lease, k.fence, replica, ttlMs, seenToken)) as [
      number,
      string,
      number,
      number?,
    ];
    const token = Number(reply[0]);
    const grant: LeaseGrant = {
      token,
      holder: String(reply[1]),
      ttlMs: Number(reply[2]),
      value: token > 0 ? `${token}:${replica}` : '',
    };
    if (token === 0 && reply[3] !== undefined) grant.heldToken = Number(reply[3]);
    if (token > 0 && Number(reply[3]) === 1) grant.dataLost = true;
    return grant;
  }

  /** True while the lease is still `value` (extended by `ttlMs`); false once it expired or another holds it. */
  async renew(instrumentKey: string, value: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW, 1, this.keys.instrument(instrumentKey).lease, value, ttlMs)) === 1;
  }

  async release(instrumentKey: string, value: string): Promise<boolean> {
    return Number(await this.redis.eval(RELEASE, 1, this.keys.instrument(instrumentKey).lease, value)) === 1;
  }

  /** Who holds the instrument's lease now (a replica name), if anyone. */
  async holder(instrumentKey: string): Promise<string | undefined> {
    return (await this.current(instrumentKey)).holder;
  }

  /** Who holds the instrument's lease now and under which fencing token (0 when nobody does). */
  async current(instrumentKey: string): Promise<{ holder?: string; token: number }> {
    const value = await this.redis.get(this.keys.instrument(instrumentKey).lease);
    const token = value === null ? 0 : Number(value.slice(0, Math.max(0, value.indexOf(':'))));
    return { holder: holderOf(value), token: Number.isSafeInteger(token) ? token : 0 };
  }

  /**
   * Says which instruments this replica knows (for `ttlMs`): returns how many the group's live replicas know
   * together, and, per instrument, the live replicas that know it (this one included).
   */
  async knows(
    replica: string,
    instrumentKeys: readonly string[],
    ttlMs: number,
  ): Promise<{ count: number; watchers: string[][] }> {
    const ids = instrumentKeys.map((key) => this.keys.instrument(key).id);
    const count =
      ids.length === 0 ? 0 : Number(await this.redis.eval(GROUP_INSTRUMENTS, 1, this.keys.instruments, ttlMs, ...ids));
    const watchers: string[][] = [];
    for (const key of instrumentKeys) {
      const list = (await this.redis.eval(HEARTBEAT, 1, this.keys.instrument(key).watchers, replica, ttlMs)) as string[];
      watchers.push(list.map(String));
    }
    return { count, watchers };
  }

  /**
   * The group's epoch (set to `candidate` when there is none: a new group, or Redis lost its data) and the run id of
   * the Redis server that holds it ('' when unknown): another run id than before means the server restarted.
   */
  async epoch(candidate: string): Promise<{ epoch: string; server: string }> {
    const reply = (await this.redis.eval(EPOCH, 1, this.keys.epoch, candidate)) as unknown;
    if (!Array.isArray(reply)) return { epoch: String(reply), server: '' };
    return { epoch: String(reply[0]), server: String(reply[1] ?? '') };
  }

  /** Gives the group a new epoch when it is still `expected` (Redis lost writes); returns the epoch now. */
  async rotateEpoch(expected: string, candidate: string): Promise<string> {
    return String(await this.redis.eval(EPOCH_ROTATE, 1, this.keys.epoch, expected, candidate));
  }

  /**
   * The instrument's write sequence (0 when none was written, or Redis lost it) and the run id of the Redis server
   * that holds it ('' when unknown): in a Cluster another master than the epoch's, as a rule.
   */
  async sequence(instrumentKey: string): Promise<{ seq: number; server: string }> {
    const reply = (await this.redis.eval(SEQUENCE, 1, this.keys.instrument(instrumentKey).seq)) as unknown;
    const [raw, server] = Array.isArray(reply) ? reply : [reply, ''];
    const seq = raw === null || raw === undefined || raw === '' ? 0 : Number(raw);
    return { seq: Number.isSafeInteger(seq) ? seq : 0, server: String(server ?? '') };
  }

  /** Says how many leases this replica holds (undefined: it leaves); returns the count of each live replica. */
  async holding(replica: string, count: number | undefined, live: readonly string[] = []): Promise<Map<string, number>> {
    const mine = count === undefined ? '' : count;
    const flat = (await this.redis.eval(HOLDING, 1, this.keys.holding, replica, mine, ...live)) as string[];
    const out = new Map<string, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(String(flat[i]), Number(flat[i + 1]));
    return out;
  }

  /** Says this replica is alive for `ttlMs` (0: leaving); returns the live replicas. */
  async heartbeat(replica: string, ttlMs: number): Promise<string[]> {
    return ((await this.redis.eval(HEARTBEAT, 1, this.keys.replicas, replica, ttlMs)) as string[]).map(String);
  }
}
