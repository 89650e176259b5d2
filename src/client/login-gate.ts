import { createHash } from 'crypto';

import { type LhError } from './errors';

/** What a session asks the gate before it sends the password: go ahead, wait for another login, or hold back. */
export type LoginTurn =
  { go: true; done: (rejection?: LhError) => void } | { go: false; wait: Promise<void> } | { go: false; held: LhError };

/** Credentials this many are remembered at most (a rejection of the oldest is forgotten first). */
const MAX_ENTRIES = 1000;

/**
 * The logins of one instrument with one pair of credentials, shared by every session of that instrument in this
 * Node-RED (its home's): while one session sends the password, another with the same credentials waits for the
 * answer instead of sending it too, and a rejection holds them all back until a user acts (`release`: a deploy,
 * Test connection). So several lh-server nodes of one instrument with one wrong password cost the instrument one
 * failed login per user action, not one per node. Only a one-way digest of the credentials is kept.
 */
export class LoginGate {
  private readonly entries = new Map<string, { inFlight?: Promise<void>; rejected?: LhError }>();
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

  /** Whether a session may send the password now; when it may, the send is in flight until `done` is called once. */
  turn(key: string): LoginTurn {
    const entry = this.entries.get(key);
    if (entry?.rejected) return { go: false, held: entry.rejected };
    if (entry?.inFlight) return { go: false, wait: entry.inFlight };
    let finish = (): void => undefined;
    const inFlight = new Promise<void>((resolve) => (finish = resolve));
    const mine = { inFlight } as { inFlight?: Promise<void>; rejected?: LhError };
    this.entries.delete(key); // newest last: the oldest is forgotten first
    this.entries.set(key, mine);
    this.bound();
    let ended = false;
    return {
      go: true,
      done: (rejection) => {
        if (ended) return;
        ended = true;
        if (this.entries.get(key) === mine) {
          if (rejection) this.entries.set(key, { rejected: rejection });
          else this.entries.delete(key);
        }
        finish();
      },
    };
  }

  /**
   * A user acted (deploy, Test connection): these credentials may be tried once more, by every session held back by
   * them (each is told, see onRelease), one at a time as ever. A login in flight stays.
   */
  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.rejected) this.entries.delete(key);
    for (const fn of [...(this.listeners.get(key) ?? [])]) fn();
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
