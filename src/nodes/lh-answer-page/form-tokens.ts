/**
 * One-time form tokens, stateless: a token is `issued.nonce.mac`, the MAC (HMAC-SHA256 under a secret of this node
 * instance) binding it to its error and time. Showing a page stores nothing, so no number of page views (of any
 * error's link) can evict an operator's open form; a POST must bring a token back, and using it records it in a
 * used-set until it would have expired anyway. The used-set only grows with forms posted and is bounded, per error
 * and in all: when it is full of live entries, further forms (of that error) are refused (fail closed: a used token is
 * never forgotten early, so a form can never be replayed). Filling one error's share takes its link, with which one
 * could answer that error anyway; the other errors' forms keep working.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'crypto';

export const FORM_TOKEN_LIFETIME_MS = 30 * 60_000;
/** Used tokens remembered at most (each until its form would have expired). */
export const MAX_USED_TOKENS = 10_000;
/** Used tokens remembered at most per error. */
export const MAX_USED_PER_ERROR = 200;
/** A token dated this far in the future is refused (clock steps of the host). */
const FUTURE_SKEW_MS = 60_000;
const MAC_LENGTH = 32;

/**
 * Where used tokens are recorded when several replicas serve the page (Redis): true the first time `mac` is
 * recorded (on whichever replica), false after; kept until `expiresAt` (ms since the epoch). Bounded as here:
 * MAX_USED_PER_ERROR per error (`errorKey`), MAX_USED_TOKENS in all, refusing when full.
 */
export type SharedUsedSet = (mac: string, expiresAt: number, errorKey: string) => Promise<boolean>;

export class FormTokens {
  private secret: Buffer = randomBytes(32);
  /** error → (mac → when the token expires) */
  private readonly used = new Map<string, Map<string, number>>();
  private usedCount = 0;
  /** The earliest expiry in `used`: until then a prune has nothing to remove, and skips its walk over the set. */
  private nextExpiry = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  /** A fresh token for a form shown for `errorKey` (nothing is stored). */
  issue(errorKey: string): string {
    const issued = this.now().toString(36);
    const nonce = randomBytes(12).toString('base64url');
    return `${issued}.${nonce}.${this.mac(errorKey, issued, nonce)}`;
  }

  /** Signs with `secret` from now on (replicas sharing it accept each other's forms); earlier tokens stop working. */
  rekey(secret: Buffer): void {
    this.secret = secret;
  }

  /**
   * With `shared`: the used-set is the replicas' one (a form posted to two replicas answers once). Without: as `use`.
   */
  async useShared(token: unknown, errorKey: string, shared?: SharedUsedSet): Promise<boolean> {
    if (!shared) return this.use(token, errorKey);
    const valid = this.check(token, errorKey);
    return valid ? shared(valid.mac, valid.expires, errorKey) : false;
  }

  /** The token's MAC and expiry when it is one this instance issued for this error and it has not expired. */
  private check(token: unknown, errorKey: string): { mac: string; expires: number } | undefined {
    if (typeof token !== 'string' || token.length > 100) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [issued, nonce, mac] = parts;
    if (!/^[0-9a-z]{1,12}$/.test(issued) || !/^[\w-]{16}$/.test(nonce) || mac.length !== MAC_LENGTH) return undefined;
    const at = parseInt(issued, 36);
    const now = this.now();
    const expires = at + FORM_TOKEN_LIFETIME_MS;
    if (!Number.isSafeInteger(at) || expires <= now || at > now + FUTURE_SKEW_MS) return undefined;
    const expected = Buffer.from(this.mac(errorKey, issued, nonce));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return { mac, expires };
  }

  /** True once for a token issued for this error by this instance, not yet used or expired. */
  use(token: unknown, errorKey: string): boolean {
    const valid = this.check(token, errorKey);
    if (!valid) return false;
    const { mac, expires } = valid;
    const now = this.now();
    if (this.used.get(errorKey)?.has(mac)) return false;
    this.prune(now);
    const mine = this.used.get(errorKey) ?? new Map<string, number>();
    // full of live entries: refuse rather than forget one
    if (this.usedCount >= MAX_USED_TOKENS || mine.size >= MAX_USED_PER_ERROR) return false;
    mine.set(mac, expires);
    this.used.set(errorKey, mine);
    this.usedCount++;
    this.nextExpiry = Math.min(this.nextExpiry, expires);
    return true;
  }

  /**
   * Whether a form of `errorKey` is refused because the used-set is full of live tokens (its error's share or the
   * whole set): the page then says so, since opening the link again would not help until some expire.
   */
  full(errorKey: string): boolean {
    this.prune(this.now());
    return this.usedCount >= MAX_USED_TOKENS || (this.used.get(errorKey)?.size ?? 0) >= MAX_USED_PER_ERROR;
  }

  /**
   * The signed state of a form shown for `errorKey`: a MAC over the digest of the choices it offered (form-choices.ts).
   * A post brings it back; the choices read afresh must give the same (so each position names what was shown).
   */
  state(errorKey: string, digest: string): string {
    return createHmac('sha256', this.secret).update(`state\n${errorKey}\n${digest}`).digest('base64url').slice(0, MAC_LENGTH);
  }

  /** Whether `given` is the state of a form shown for `errorKey` with choices of this digest. */
  stateHolds(given: unknown, errorKey: string, digest: string): boolean {
    if (typeof given !== 'string' || given.length !== MAC_LENGTH) return false;
    const expected = Buffer.from(this.state(errorKey, digest));
    const got = Buffer.from(given);
    return got.length === expected.length && timingSafeEqual(got, expected);
  }

  /** Used tokens remembered now (the only memory the tokens take). */
  get size(): number {
    return this.usedCount;
  }

  private mac(errorKey: string, issued: string, nonce: string): string {
    return createHmac('sha256', this.secret).update(`${errorKey}\n${issued}\n${nonce}`).digest('base64url').slice(0, MAC_LENGTH);
  }

  /** Forgets the used tokens that have expired; walks the set only once one has (a use was O(set size) before). */
  private prune(now: number): void {
    if (now < this.nextExpiry) return;
    let next = Infinity;
    for (const [errorKey, macs] of this.used) {
      for (const [mac, expires] of macs) {
        if (expires > now) {
          next = Math.min(next, expires);
          continue;
        }
        macs.delete(mac);
        this.usedCount--;
      }
      if (macs.size === 0) this.used.delete(errorKey);
    }
    this.nextExpiry = next;
  }
}
