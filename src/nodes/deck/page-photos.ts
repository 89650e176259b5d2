/**
 * The photos an answer page keeps for its links (issue 33): the one taken when the error was raised, kept until the
 * link expires and not a moment longer, bounded in count and bytes; and how a photo is served (never cached).
 */
import type { ServerResponse } from 'http';

import type { Snapshot } from '../../client';

/** At most this many photos per page node (the oldest link's goes first). */
export const MAX_PAGE_PHOTOS = 200;
/** At most this many bytes of photos per page node. */
export const MAX_PAGE_PHOTO_BYTES = 64 * 1024 * 1024;

/** The longest delay a Node.js timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Headers of a served photo: only for whoever holds the link, never stored by a browser or a proxy. */
export const PHOTO_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store, private',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Content-Disposition': 'inline',
};

export class PagePhotos {
  private readonly kept = new Map<string, { snapshot: Snapshot; expires: number }>();
  /**
   * The bytes held: each photo's content once, however many links keep it (errors raised together share one photo,
   * one Buffer: counted per link, a burst of 20 errors with a 4 MiB photo took 80 MiB and lost the first links' photo)
   */
  private bytes = 0;
  /** how many kept links hold each content */
  private readonly holders = new Map<Buffer, number>();
  /** the node closed: a photo it was still waiting for is not kept (nobody can ask for it) */
  private closed = false;
  /** one timer per kept photo, firing when its link expires: the photo goes then, whether or not anyone asks */
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly maxEntries = MAX_PAGE_PHOTOS,
    private readonly maxBytes = MAX_PAGE_PHOTO_BYTES,
  ) {}

  /** Keeps `snapshot` for `key` until `expires` (ms since the epoch); a later link for the same error replaces it. */
  keep(key: string, snapshot: Snapshot, expires: number, now = Date.now()): void {
    this.prune(now);
    if (this.closed || expires <= now || snapshot.content.length > this.maxBytes) return;
    this.drop(key);
    this.kept.set(key, { snapshot, expires });
    this.hold(snapshot.content);
    this.arm(key, expires, now);
    while (this.kept.size > this.maxEntries || this.bytes > this.maxBytes) this.drop(this.kept.keys().next().value as string);
  }

  /**
   * The timer of `key`, firing at its link's expiry; a link that outlives the longest timer (2^31 - 1 ms, under 25
   * days: links may last 90) is timed again when that one fires, so its photo still goes at the expiry.
   */
  private arm(key: string, expires: number, now = Date.now()): void {
    const timer = setTimeout(
      () => {
        this.prune();
        const entry = this.kept.get(key);
        if (entry?.expires === expires) this.arm(key, expires);
      },
      Math.min(expires - now + 1, MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(key, timer);
  }

  /** The photo kept for `key`, unless its link has expired (then it is gone). */
  get(key: string, now = Date.now()): Snapshot | undefined {
    this.prune(now);
    return this.kept.get(key)?.snapshot;
  }

  get size(): number {
    return this.kept.size;
  }

  /** Forgets every photo whose link has expired. */
  prune(now = Date.now()): void {
    for (const [key, entry] of this.kept) if (entry.expires <= now) this.drop(key);
  }

  /** Forgets every photo and keeps none from now on (the node closed, maybe while a photo was being taken). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.kept.clear();
    this.holders.clear();
    this.bytes = 0;
  }

  /** The bytes the node holds (each photo's content once). */
  get heldBytes(): number {
    return this.bytes;
  }

  private hold(content: Buffer): void {
    const n = this.holders.get(content) ?? 0;
    this.holders.set(content, n + 1);
    if (n === 0) this.bytes += content.length;
  }

  private let(content: Buffer): void {
    const n = this.holders.get(content) ?? 0;
    if (n <= 1) {
      this.holders.delete(content);
      if (n === 1) this.bytes -= content.length;
    } else this.holders.set(content, n - 1);
  }

  private drop(key: string): void {
    const entry = this.kept.get(key);
    if (!entry) return;
    this.let(entry.snapshot.content);
    this.kept.delete(key);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }
}

/** Sends the photo's bytes with PHOTO_HEADERS. */
export function sendPhoto(res: ServerResponse, snapshot: Snapshot): void {
  if (res.headersSent) return;
  res.writeHead(200, { ...PHOTO_HEADERS, 'Content-Type': snapshot.contentType, 'Content-Length': snapshot.content.length });
  res.end(snapshot.content);
}

/** Which photo a page request asks for (`photo=raised|fresh`), if any. */
export function photoAsked(value: string | undefined): 'raised' | 'fresh' | undefined {
  return value === 'raised' || value === 'fresh' ? value : undefined;
}
