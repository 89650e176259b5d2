/**
 * The lock an apply of a plan (lh-protocol) holds on one protocol of one instrument across the Node-REDs of a
 * coordination group. Within one Node-RED applies to one protocol wait for each other (the instrument's home); two
 * Node-REDs did not, and both passed the base check and both wrote (a step to create was created twice). With
 * coordination an apply takes the protocol's lock before its base check: a key set only if absent (SET NX PX) to a
 * random value (then `:<replica>`, so a refusal names who holds it), renewed by compare-and-extend every third of its
 * TTL and before each write, given back by compare-and-delete when the apply ends. A second apply while another
 * Node-RED holds it is refused before anything is written; a lock lost mid-apply (Redis down, the key expired or gone)
 * stops the apply before its next write; a replica killed mid-apply leaves the lock to expire (30 s).
 *
 * The same lock guards a set of the instrument's software settings (lh-settings: a merge reads, merges and writes them):
 * two Node-REDs merging different settings at once both read before either wrote, and the second wrote the first's
 * setting back. There a second set waits for the lock (a set takes a moment) instead of being refused.
 */
import { randomBytes } from 'crypto';
import { performance } from 'perf_hooks';

import { type HeldApplyLock, LhError, type LhErrorKind, type ProtocolApplyLocks } from '../client';
import { type InstrumentKeys } from './keys';
import { holderOf, leaseSafetyMs, type RedisLike } from './leases';
import { LOCK_TAKE, RELEASE, RENEW } from './scripts';

/** How long an apply lock lasts without renewal: a replica killed mid-apply frees it that long after. */
export const APPLY_LOCK_TTL_MS = 30_000;

export interface ApplyLockOptions {
  /** the lock's TTL (tests shorten it) */
  ttlMs?: number;
  /** a monotonic clock in ms (default performance.now): how long the lock is certainly still this apply's */
  now?: () => number;
}

function reason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\.+$/, '');
}

/** The apply locks of one instrument (its interface A: protocols live there), shared by the replicas of a group. */
export class ApplyLocks implements ProtocolApplyLocks {
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisLike,
    private readonly keys: InstrumentKeys,
    private readonly replica: string,
    options: ApplyLockOptions = {},
  ) {
    this.ttlMs = Math.max(30, Math.floor(options.ttlMs ?? APPLY_LOCK_TTL_MS));
    this.now = options.now ?? (() => performance.now());
  }

  async take(protocolId: number, operation: string): Promise<HeldApplyLock> {
    return this.takeKey(this.keys.applyLock(protocolId), protocolSubject(protocolId), operation);
  }

  /**
   * The software settings' lock (lh-settings: a merge reads, merges and writes them): while another Node-RED holds it
   * the set waits, trying again every SETTINGS_LOCK_RETRY_MS, for at most `waitMs` (default: the lock's TTL, so a
   * Node-RED killed while it held the lock delays the set, not refuses it), then is refused (busy).
   */
  async takeSettings(operation: string, waitMs: number = this.ttlMs + SETTINGS_LOCK_RETRY_MS): Promise<HeldApplyLock> {
    const until = this.now() + Math.max(0, waitMs);
    for (;;) {
      try {
        return await this.takeKey(this.keys.settingsLock, SETTINGS_SUBJECT, operation);
      } catch (err) {
        if (!(err instanceof LhError) || err.kind !== 'busy' || this.now() >= until) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, SETTINGS_LOCK_RETRY_MS));
    }
  }

  private async takeKey(key: string, subject: LockSubject, operation: string): Promise<HeldApplyLock> {
    const value = `${randomBytes(16).toString('hex')}:${this.replica}`;
    const takenAt = this.now();
    let reply: unknown;
    try {
      reply = await this.redis.eval(LOCK_TAKE, 1, key, value, this.ttlMs);
    } catch (err) {
      // the SET may have landed and its answer been lost: given back (else it expires)
      void this.redis.eval(RELEASE, 1, key, value).catch(() => undefined);
      throw new LhError(subject.unreachable(reason(err)), { kind: 'network', operation });
    }
    const [taken, held, pttl] = Array.isArray(reply) ? (reply as unknown[]) : [reply];
    if (Number(taken) !== 1) {
      const holder = holderOf(typeof held === 'string' ? held : null);
      const left = Math.max(1, Math.ceil(Math.max(0, Number(pttl) || 0) / 1000));
      throw new LhError(subject.locked(holder === this.replica ? undefined : (holder ?? ''), left), { kind: 'busy', operation });
    }
    return new HeldLock(this.redis, key, value, this.ttlMs, this.now, subject, operation, takenAt);
  }
}

/** What a lock guards, in its messages. */
interface LockSubject {
  /** `holder`: undefined when it is this Node-RED, '' when unknown; `left`: seconds until it expires */
  locked(holder: string | undefined, left: number): string;
  unreachable(why: string): string;
  lost(why: string): string;
}

function protocolSubject(protocolId: number): LockSubject {
  return {
    locked: (holder, left) =>
      `protocol ${protocolId} is locked: ${holder === undefined ? 'this Node-RED (an earlier apply of it)' : `another Node-RED${holder ? ` (${holder})` : ''}`} is applying a plan to it: nothing was written; apply again once that apply has ended (its lock expires within ${left} s if that Node-RED stopped)`,
    unreachable: (why) =>
      `protocol ${protocolId}: the apply lock shared by the Node-REDs cannot be reached in Redis (${why}): nothing was written; apply again once Redis is back`,
    lost: (why) =>
      `protocol ${protocolId}: the lock this apply held in Redis was lost (${why}): another Node-RED may be applying a plan to it now, so this apply stopped before its next write`,
  };
}

/** How often a set of software settings asks again for their lock while another Node-RED holds it. */
export const SETTINGS_LOCK_RETRY_MS = 100;

const SETTINGS_SUBJECT: LockSubject = {
  locked: (holder, left) =>
    `the software settings are locked: ${holder === undefined ? 'this Node-RED' : `another Node-RED${holder ? ` (${holder})` : ''}`} has been setting them too long: nothing was written; set them again later (its lock expires within ${left} s if that Node-RED stopped)`,
  unreachable: (why) =>
    `the software settings' lock shared by the Node-REDs cannot be reached in Redis (${why}): nothing was written; set them again once Redis is back`,
  lost: (why) =>
    `the software settings' lock this set held in Redis was lost (${why}): another Node-RED may be setting them now, so this set stopped before its write`,
};

/** A lock taken: renewed every third of its TTL until released or lost. */
class HeldLock implements HeldApplyLock {
  private lost?: LhError;
  private validUntil: number;
  private timer?: NodeJS.Timeout;
  private released = false;

  constructor(
    private readonly redis: RedisLike,
    private readonly key: string,
    private readonly value: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly subject: LockSubject,
    private readonly operation: string,
    takenAt: number,
  ) {
    this.validUntil = takenAt + ttlMs - leaseSafetyMs(ttlMs);
    this.schedule();
  }

  private schedule(): void {
    if (this.released || this.lost) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.extend().then(() => this.schedule());
      },
      Math.max(10, Math.floor(this.ttlMs / 3)),
    );
    this.timer.unref?.();
  }

  private lose(why: string, kind: LhErrorKind): void {
    if (this.lost || this.released) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.lost = new LhError(this.subject.lost(why), { kind, operation: this.operation });
  }

  /** Compare-and-extend: the lock stays this apply's for another TTL, or it is lost. */
  private async extend(): Promise<void> {
    if (this.released || this.lost) return;
    const started = this.now();
    let reply: unknown;
    try {
      reply = await this.redis.eval(RENEW, 1, this.key, this.value, this.ttlMs);
    } catch (err) {
      return this.lose(`Redis could not be reached to renew it: ${reason(err)}`, 'network');
    }
    if (Number(reply) !== 1) return this.lose('it expired, or Redis lost it, and it is no longer this apply’s', 'busy');
    this.validUntil = Math.max(this.validUntil, started + this.ttlMs - leaseSafetyMs(this.ttlMs));
  }

  async confirm(): Promise<void> {
    if (!this.lost && this.now() >= this.validUntil)
      this.lose('its last renewal is older than its TTL: this Node-RED was paused, or Redis answered too late', 'busy');
    if (!this.lost) await this.extend();
    if (this.lost) throw this.lost;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.redis.eval(RELEASE, 1, this.key, this.value).catch(() => undefined);
  }
}
