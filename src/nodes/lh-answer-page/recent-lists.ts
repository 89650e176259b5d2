import { steadyNow } from '../../client';

/**
 * The instrument's error lists as page views read them: one read shared by every view within `ttlMs` (and by every
 * view while a read is under way), failures included. However many times a link is opened, the instrument is read
 * at most once per source and interval. A list read before `notBefore` (the moment the error's link was made) is not
 * used for it: a fresh link never shows "no longer pending" from a list older than its error. Answers (POST) always
 * read afresh (refresh), and the views after an answer share that newer read.
 *
 * A list's age, and its order against a link this page made, are read on the steady clock (`now`): a step of the wall
 * clock (NTP, a resumed VM) set back an hour had the list read before it shared for that hour, and a link made after
 * it took that older list for a newer one ("no longer pending", no buttons). A link another Node-RED signed is known
 * by the wall clock only (`notBefore.wall`): compared with the wall time of the read.
 */
export const PAGE_LIST_TTL_MS = 2000;

/** When a link was made: on this process's steady clock (a link this page made), on the wall clock (a signed one). */
export interface MadeAt {
  steady?: number;
  wall?: number;
}

export class RecentLists<K, T> {
  private readonly entries = new Map<K, { at: number; wallAt: number; list: Promise<T> }>();

  constructor(
    private readonly ttlMs: number = PAGE_LIST_TTL_MS,
    /** a clock that never steps (readings of this process only) */
    private readonly now: () => number = steadyNow,
    private readonly wall: () => number = Date.now,
  ) {}

  /**
   * The list under `key`: the one read within ttlMs (or being read) and not before `notBefore`, else a new read. A
   * number is a reading of `now`.
   */
  get(key: K, read: () => Promise<T>, notBefore: number | MadeAt = {}): Promise<T> {
    const made = typeof notBefore === 'number' ? { steady: notBefore } : notBefore;
    const now = this.now();
    const entry = this.entries.get(key);
    if (
      entry &&
      now - entry.at < this.ttlMs &&
      (made.steady === undefined || entry.at >= made.steady) &&
      (made.wall === undefined || entry.wallAt >= made.wall)
    )
      return entry.list;
    return this.refresh(key, read);
  }

  /** A read made now whatever is kept (an answer's own read): the views that follow share it, never an older one. */
  refresh(key: K, read: () => Promise<T>): Promise<T> {
    const list = read();
    this.entries.set(key, { at: this.now(), wallAt: this.wall(), list });
    list.catch(() => undefined); // a failed read is shared like a list; the view that gets it reports it
    return list;
  }
}
