import { createHash } from 'crypto';

import { LhError } from './errors';
import { withinSpan } from './wall-clock';

/** What a session asks the gate before it sends the password: go ahead, wait for another login, or hold back. */
export type LoginTurn =
  | {
      go: true;
      /**
       * The login ended: answered (a token), or rejected (`rejection`: held back until a user acts; `state`: the
       * session state it puts a session in, kept with it across restarts when the gate keeps rejections).
       */
      done: (rejection?: LhError, state?: string) => void;
      /**
       * The login failed without a verdict on the password after it may have reached the instrument (a 5xx, a reset, a
       * timeout): the next login with these credentials waits (spacedOutMs), as the instrument may have counted it.
       */
      failed: (failure: LhError, now?: number) => void;
    }
  | { go: false; wait: Promise<void> }
  | { go: false; held: LhError; kept?: KeptRejection }
  | { go: false; spaced: { failure: LhError; count: number; nextAt: number } };

/** After the first login failing without a verdict the next waits this long, doubling with each more, up to the cap. */
export const LOGIN_SPACING_FIRST_MS = 1000;
export const LOGIN_SPACING_MAX_MS = 60_000;

/** How long the next login waits after `count` logins in a row failed without a verdict: 1 s, 2 s, 4 s, … 60 s. */
export function spacedOutMs(count: number): number {
  if (count <= 0) return 0;
  return Math.min(LOGIN_SPACING_MAX_MS, LOGIN_SPACING_FIRST_MS * 2 ** Math.min(count - 1, 30));
}

/**
 * A held rejection as kept across restarts of Node-RED: what the instrument decided and when, never the password, the
 * user name or the instrument's words (which may echo the password).
 */
export interface KeptRejection {
  /** the session state the rejection put its session in (login-failed, password-expired, locked) */
  state: string;
  statusCode?: number;
  /** when it was rejected (ms since the epoch) */
  at: number;
}

/** The user name and password a login sends, as a store needs them to find where it keeps their rejection. */
export interface LoginCredentials {
  username: string;
  password: string;
}

/**
 * Where a gate keeps its rejections so that they outlive the process (a file per rejection in Node-RED's user
 * directory): a Node-RED restarted in a loop (systemd, a container's restart policy) with a wrong password would
 * otherwise send it once per start and lock the user out. `key` is the gate's key (the same credentials, the same
 * key: a store may remember what it worked out for it); what it writes must not let anyone who reads it test guessed
 * passwords cheaply (the gate's key is a fast digest: a store does not write it).
 */
export interface RejectionStore {
  load(key: string, credentials: LoginCredentials): KeptRejection | undefined;
  save(key: string, credentials: LoginCredentials, kept: KeptRejection): void;
  remove(key: string, credentials: LoginCredentials): void;
  /** The way out of a kept rejection where nobody can press Test connection (a Node-RED run without its editor). */
  readonly wayOut: string;
}

interface Entry {
  inFlight?: Promise<void>;
  rejected?: LhError;
  /** the rejection as kept across restarts: it was restored from the store (its own words are this start's) */
  kept?: KeptRejection;
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
 * Only a one-way digest of the credentials is kept. With a store (keepIn: Node-RED's user directory) a rejection also
 * outlives the process, so a Node-RED restarted in a loop sends a wrong password once, not once per start.
 */
export class LoginGate {
  private readonly entries = new Map<string, Entry>();
  /** The sessions to tell when a user acts on their credentials (they hold a copy of the rejection): live ones only. */
  private readonly listeners = new Map<string, Set<() => void>>();
  /** Where rejections are kept across restarts, if anywhere (keepIn), and the keys already looked up there. */
  private store?: RejectionStore;
  private looked = new Set<string>();

  /**
   * From now on rejections are kept in `store` as well, and a key this gate holds nothing for is looked up there first
   * (once): a rejection from before a restart holds the credentials back as one of this start's. The same store again
   * changes nothing.
   */
  keepIn(store: RejectionStore | undefined): void {
    if (store === this.store) return;
    this.store = store;
    this.looked = new Set();
  }

  /** The way out of a kept rejection without the editor, when rejections are kept across restarts. */
  get wayOut(): string | undefined {
    return this.store?.wayOut;
  }

  /** The rejection kept for `key` before this start, made this gate's entry; looked up once per key and store. */
  private restored(key: string, credentials: LoginCredentials | undefined): Entry | undefined {
    const store = this.store;
    if (!store || !credentials || this.looked.has(key)) return undefined;
    if (this.looked.size >= MAX_ENTRIES) this.looked.clear();
    this.looked.add(key);
    let kept: KeptRejection | undefined;
    try {
      kept = store.load(key, credentials);
    } catch {
      kept = undefined; // an unreadable file holds nothing back: the login goes as without the store
    }
    if (!kept) return undefined;
    const rejected = new LhError(`login rejected (${kept.statusCode ?? 'no status'}) before this start of Node-RED`, {
      kind: 'auth',
      operation: 'authenticate',
      statusCode: kept.statusCode,
    });
    const entry: Entry = { rejected, kept };
    this.entries.set(key, entry);
    this.bound();
    return entry;
  }

  private keep(
    key: string,
    credentials: LoginCredentials | undefined,
    rejection: LhError,
    state: string | undefined,
    now: number,
  ): KeptRejection {
    const kept: KeptRejection = { state: state ?? 'login-failed', statusCode: rejection.statusCode, at: now };
    try {
      if (credentials) this.store?.save(key, credentials, kept);
    } catch {
      // not kept across restarts (the user directory not writable): held in memory as before
    }
    return kept;
  }

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
   * `credentials` (those `key` is of) let the gate look up and keep a rejection across restarts where it keeps them.
   */
  turn(key: string, now: number = Date.now(), credentials?: LoginCredentials): LoginTurn {
    const entry = this.entries.get(key) ?? this.restored(key, credentials);
    if (entry?.rejected) return { go: false, held: entry.rejected, kept: entry.kept };
    if (entry?.inFlight) return { go: false, wait: entry.inFlight };
    // `now` is the wall clock: one set back since the failure (an NTP step, a VM resumed) puts the next login further
    // ahead than its spacing, and waiting for it would hold every login for as long as the step (an hour back: no
    // request for an hour). Nor may it then go at once (a clock jittering back would unspace every failure): the wait
    // counts afresh from now, one spacing at most.
    if (entry?.spaced) {
      const nextAt = withinSpan(entry.spaced.nextAt, now, spacedOutMs(entry.spaced.count));
      if (nextAt !== entry.spaced.nextAt) entry.spaced = { ...entry.spaced, nextAt };
    }
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
      done: (rejection, state) => {
        if (rejection && !ended) this.keep(key, credentials, rejection, state, Date.now());
        end(rejection ? { rejected: rejection } : undefined);
      },
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
  release(key: string, credentials?: LoginCredentials): void {
    try {
      if (credentials) this.store?.remove(key, credentials);
    } catch {
      // a file that cannot be removed is found again at the next start (and released again by Test connection)
    }
    this.looked.add(key);
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
