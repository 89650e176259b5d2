/**
 * The secrets an answer page signs and checks links with. Alone: the one its dialog stored and the one derived from
 * the Node-RED's link key (user dir). With coordination (the lh-server has an lh-coordination node), the key is the
 * instrument's shared one in Redis, so any replica verifies a link any other made; the local ones still verify the
 * links sent before. The shared key is read once (again after a failure, at the next link or page), and then put
 * back every SHARED_KEY_REFRESH_MS where Redis lost it (FLUSHALL, a restart without persistence, an eviction): a
 * replica that starts afterwards finds it instead of making another. One that made another meanwhile wins (first
 * written): the others sign with it from then on and keep verifying the links of the key they had.
 */
import { createHmac } from 'crypto';

import { derivedSecret } from './link-key';

/** How often a page puts the shared key it signs with back in Redis (where Redis lost it), and reads what is there. */
export const SHARED_KEY_REFRESH_MS = 2000;
/** Shared keys given up for one another replica made (after Redis lost the key), still verifying links: at most. */
const MAX_PREVIOUS = 4;

export class PageSecrets {
  private shared?: string;
  /** the shared key `shared` is derived from: what this page puts back in Redis */
  private sharedKey?: Buffer;
  /** secrets of shared keys given up for another (newest first): links signed with them still verify */
  private previous: string[] = [];
  private loading?: Promise<string | undefined>;
  private retry?: NodeJS.Timeout;
  private refresh?: NodeJS.Timeout;
  private closed = false;
  private failures = 0;

  /**
   * `local`: signing first; `loadShared`: the instrument's shared key (undefined without coordination), `candidate`
   * stored first when Redis has none
   */
  constructor(
    private readonly nodeId: string,
    private readonly local: string[],
    private readonly loadShared?: (candidate?: Buffer) => Promise<Buffer | undefined>,
    private readonly onShared?: (secret: string) => void,
    private readonly onError?: (err: Error) => void,
  ) {
    if (loadShared) this.load();
  }

  /**
   * Loads the shared key now, and again every second until it is there: the page's route decides synchronously which
   * page owns a link, so the key must be at hand before the first request (Redis may not be connected yet at start).
   */
  private load(): void {
    this.ready().catch((err: unknown) => {
      // a Redis still connecting at start is not worth a warning; one that stays away is
      if (++this.failures >= 5) this.onError?.(err instanceof Error ? err : new Error(String(err)));
      if (this.closed) return;
      this.retry = setTimeout(() => this.load(), Math.min(5000, 100 * this.failures));
      this.retry.unref();
    });
  }

  /** Stops retrying (the node closed). */
  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.refresh) clearTimeout(this.refresh);
  }

  /** Whether links are signed with a key shared by replicas. */
  get coordinated(): boolean {
    return this.loadShared !== undefined;
  }

  /**
   * Whether the shared key is still awaited: the page then claims the links on its path no other page there signed
   * (it cannot tell yet whether it signed them) and checks them once the key is there.
   */
  get pending(): boolean {
    return this.loadShared !== undefined && this.shared === undefined;
  }

  /** Every secret a link may be signed with, the signing one first (sync: the page's route picks its owner). */
  get all(): string[] {
    return this.shared ? [this.shared, ...this.previous, ...this.local] : this.local;
  }

  /** The shared secret once loaded (undefined without coordination); throws when Redis cannot give it. */
  async ready(): Promise<string | undefined> {
    if (!this.loadShared || this.shared) return this.shared;
    this.loading ??= this.loadShared().then(
      (key) => {
        if (!key) throw new Error('the shared answer-link key in Redis is not a key (delete it to have a new one made)');
        const secret = this.adopt(key);
        this.keepInRedis();
        return secret;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }

  /** Signs with `key` from now on; the shared secret signed with before still verifies (bounded). */
  private adopt(key: Buffer): string {
    const secret = derivedSecret(key, this.nodeId);
    this.sharedKey = key;
    if (secret === this.shared) return secret;
    if (this.shared) this.previous = [this.shared, ...this.previous.filter((s) => s !== secret)].slice(0, MAX_PREVIOUS);
    this.shared = secret;
    this.onShared?.(secret);
    return secret;
  }

  /**
   * Every SHARED_KEY_REFRESH_MS: the key signed with goes back to Redis where it is gone (set only if absent), and
   * the key Redis holds is signed with from then on (another replica put a key there first). A failure changes
   * nothing: tried again at the next turn.
   */
  private keepInRedis(): void {
    const load = this.loadShared;
    if (this.closed || this.refresh || !load) return;
    this.refresh = setTimeout(() => {
      void load(this.sharedKey)
        .then(
          (key) => {
            if (key && !this.closed) this.adopt(key);
          },
          () => undefined,
        )
        .finally(() => {
          this.refresh = undefined;
          this.keepInRedis();
        });
    }, SHARED_KEY_REFRESH_MS);
    this.refresh.unref();
  }

  /** The secret new links are signed with. */
  async signing(): Promise<string> {
    return (await this.ready()) ?? this.local[0];
  }
}

/** The form-token key derived from a link secret (replicas sharing the link secret share it). */
export function formSecret(linkSecret: string): Buffer {
  return createHmac('sha256', linkSecret).update('lh-answer-page form tokens').digest();
}
