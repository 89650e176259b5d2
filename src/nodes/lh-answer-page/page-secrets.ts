/**
 * The secrets an answer page signs and checks links with. Alone: the one its dialog stored and the one derived from
 * the Node-RED's link key (user dir). With coordination (the lh-server has an lh-coordination node), the key is the
 * instrument's shared one in Redis, so any replica verifies a link any other made; the local ones still verify the
 * links sent before. The shared key is read once (again after a failure, at the next link or page).
 */
import { createHmac } from 'crypto';

import { derivedSecret } from './link-key';

export class PageSecrets {
  private shared?: string;
  private loading?: Promise<string | undefined>;
  private retry?: NodeJS.Timeout;
  private closed = false;
  private failures = 0;

  /** `local`: signing first; `loadShared`: the instrument's shared key (undefined without coordination) */
  constructor(
    private readonly nodeId: string,
    private readonly local: string[],
    private readonly loadShared?: () => Promise<Buffer | undefined>,
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
  }

  /** Whether links are signed with a key shared by replicas. */
  get coordinated(): boolean {
    return this.loadShared !== undefined;
  }

  /**
   * Whether the shared key is still awaited: the page then claims every link on its path (it cannot tell yet whether
   * it signed it) and checks it once the key is there.
   */
  get pending(): boolean {
    return this.loadShared !== undefined && this.shared === undefined;
  }

  /** Every secret a link may be signed with, the signing one first (sync: the page's route picks its owner). */
  get all(): string[] {
    return this.shared ? [this.shared, ...this.local] : this.local;
  }

  /** The shared secret once loaded (undefined without coordination); throws when Redis cannot give it. */
  async ready(): Promise<string | undefined> {
    if (!this.loadShared || this.shared) return this.shared;
    this.loading ??= this.loadShared().then(
      (key) => {
        if (!key) throw new Error('the shared answer-link key in Redis is not a key (delete it to have a new one made)');
        this.shared = derivedSecret(key, this.nodeId);
        this.onShared?.(this.shared);
        return this.shared;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
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
