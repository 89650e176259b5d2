/**
 * The instrument's error lists as page views read them: one read shared by every view within `ttlMs` (and by every
 * view while a read is under way), failures included. However many times a link is opened, the instrument is read
 * at most once per source and interval. A list read before `notBefore` (the moment the error's link was made) is not
 * used for it: a fresh link never shows "no longer pending" from a list older than its error. Answers (POST) always
 * read afresh (refresh), and the views after an answer share that newer read.
 */
export const PAGE_LIST_TTL_MS = 2000;

export class RecentLists<K, T> {
  private readonly entries = new Map<K, { at: number; list: Promise<T> }>();

  constructor(
    private readonly ttlMs: number = PAGE_LIST_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The list under `key`: the one read within ttlMs (or being read) and not before `notBefore`, else a new read. */
  get(key: K, read: () => Promise<T>, notBefore = Number.NEGATIVE_INFINITY): Promise<T> {
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.at < this.ttlMs && entry.at >= notBefore) return entry.list;
    const list = read();
    this.entries.set(key, { at: now, list });
    list.catch(() => undefined); // a failed read is shared like a list; the view that gets it reports it
    return list;
  }

  /** A read made now whatever is kept (an answer's own read): the views that follow share it, never an older one. */
  refresh(key: K, read: () => Promise<T>): Promise<T> {
    const list = read();
    this.entries.set(key, { at: this.now(), list });
    list.catch(() => undefined);
    return list;
  }
}
