import { createHash } from 'crypto';

import { type LhError } from './errors';

/** What a session asks the gate before it sends the password: go ahead, wait for another login, or hold back. */
export type LoginTurn =
  | {
      go: true;
      /** The login ended: answered (a token), or rejected (`rejection`: held back until a user acts). */
      done: (rejection?: LhError) => void;
      /**
       * The login failed without a verdict on the password after it may have reached the instrument (a 5xx, a reset, a
       * timeout): the next login with these credentials waits (spacedOutMs), as the instrument may have counted it.
       */
      failed: (failure: LhError, now?: number) => void;
    }
  | { go: false; wait: Promise<void> }
  | { go: false; held: LhError }
  | { go: false; spaced: { failure: LhError; count: number; nextAt: number } };

/** After the first login failing without a verdict the next waits this long, doubling with each more, up to the cap. */
export const LOGIN_SPACING_FIRST_MS = 1000;
export const LOGIN_SPACING_MAX_MS = 60_000;

/** How long the next login waits after `count` logins in a row failed without a verdict: 1 s, 2 s, 4 s, … 60 s. */
export function spacedOutMs(count: number): number {
  if (count <= 0) return 0;
  return Math.min(LOGIN_SPACING_MAX_MS, LOGIN_SPACING_FIRST_MS * 2 ** Math.min(count - 1, 30));
}

interface Entry {
  inFlight?: Promise<void>;
  rejected?: LhError;
  /** logins in a row that failed without a verdict, the last failure, and when the next may go */
  spaced?: { failure: LhError; count: number; nextAt: number };
}

/** Credentials this many are remembered at most (a rejection of the oldest is forgotten first). */
const MAX_ENTRIES = 1000;

/**
 * The logins of one instrument with one pair of credentials, shared by every session of that instrument in this
 * Node-RED (its home's): while one session sends the password, another with the same credentials waits for the
 * answer instead of sending it too, and a rejection holds them all back until a user acts (`release`: a successful
 * Test connection; a deploy does not, changed credentials being another key). So several lh-server nodes of one
 * instrument with one wrong password cost the instrument one failed login per wrong password, not one per node or
 * deploy. A login that fails without a verdict on the password (a 5xx, a reset, a timeout), which the instrument may
 * count all the same, spaces the next out: 1 s, 2 s, 4 s, … at most 60 s (a user action lets the next go at once).
 * Only a one-way digest of the credentials is kept.
 */
export class LoginGate {
  private readonly entries = new Map<string, Entry>();
  /** The sessions to tell when a user acts on their credentials (they hold a copy of the rejection): live ones only. */
  private readonly listeners = new Map<string, Set<() => void>>();

  /**
   * The key of a user name and password (a digest: the gate keeps no password). The user name in lower case: the
   * instrument (an ASP.NET service) finds a user in any letter case and counts each failure against that one user, so
   * `Admin` and `admin` with one wrong password are one wrong password to it.
   */
  static keyOf(username: string, password: string): string {
    return createHash('sha256')
      .update(JSON.stringify([username.toLowerCase(), password]))
      .digest('base64url');
  }

  /**
   * Whether a session may send the password now (`now`: its clock); when it may, the send is in flight until `done`
   * or `failed` is called once. Logins that failed without a verdict space the next out (`spaced`: fail at once).
   */
  turn(key: string, now: number = Date.now()): LoginTurn {
    const entry = this.entries.get(key);
    if (entry?.rejected) return { go: false, held: entry.rejected };
    if (entry?.inFlight) return { go: false, wait: entry.inFlight };
    if (entry?.spaced && now < entry.spaced.nextAt) return { go: false, spaced: entry.spaced };
    let finish = (): void => undefined;
    const inFlight = new Promise<void>((resolve) => (finish = resolve));
    const spaced = entry?.spaced;
    const mine: Entry = { inFlight, spaced };
    this.entries.delete(key); // newest last: the oldest is forgotten first
    this.entries.set(key, mine);
    this.bound();
    let ended = false;
    const end = (next: Entry | undefined): void => {
      if (ended) return;
      ended = true;
      if (this.entries.get(key) === mine) {
        if (next) this.entries.set(key, next);
        else this.entries.delete(key);
      }
      finish();
    };
    return {
      go: true,
      done: (rejection) => end(rejection ? { rejected: rejection } : undefined),
      failed: (failure, at = Date.now()) => {
        const count = (spaced?.count ?? 0) + 1;
        end({ spaced: { failure, count, nextAt: at + spacedOutMs(count) } });
      },
    };
  }

  /**
   * A user acted (Test connection): these credentials may be tried once more, by every session held back by
   * them (each is told, see onRelease), one at a time as ever. A login in flight stays.
   */
  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.rejected || (entry?.spaced && !entry.inFlight)) this.entries.delete(key);
    else if (entry?.spaced) entry.spaced = undefined;
    for (const fn of [...(this.listeners.get(key) ?? [])]) fn();
  }

  /** When the next login with these credentials may go, while they are spaced out after failures without a verdict. */
  nextAt(key: string): number | undefined {
    return this.entries.get(key)?.spaced?.nextAt;
  }

  /** Calls `fn` at each release of `key` until the returned function is called (a session, until it ends). */
  onRelease(key: string, fn: () => void): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /** Forgets the oldest rejections past MAX_ENTRIES; a login in flight stays (forgotten, a second could go out beside it). */
  private bound(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES) return;
      if (!entry.inFlight) this.entries.delete(key);
    }
  }
}
