/**
 * Polls triggered by an event socket (re)connecting, capped: at most one per poll interval. A connection that
 * flaps (an instrument accepting the upgrade and closing at once) can then never turn into a storm of polls; the
 * regular poll, and pushes, still catch everything.
 */
export class ConnectPolls {
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this connect may trigger a poll (and counts it); false within an interval of the last one. */
  allow(): boolean {
    const t = this.now();
    if (t - this.last < this.intervalMs()) return false;
    this.last = t;
    return true;
  }
}

/**
 * Polls triggered by pushed frames, capped: the first frame polls at once, further frames within `gapMs` of that
 * poll are folded into one poll when the gap has passed. A flood of frames (a chatty or hostile instrument) then
 * costs at most one poll per gap instead of polls back to back; nothing pushed is missed, only folded.
 */
/** The shortest time between two polls triggered by pushes. */
export const PUSH_POLL_GAP_MS = 25;

export class PushPolls {
  private last = Number.NEGATIVE_INFINITY;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly poll: () => void,
    private readonly gapMs: number = PUSH_POLL_GAP_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A frame asks for a poll. */
  request(): void {
    if (this.timer) return; // a folded poll is already planned
    const wait = this.last + this.gapMs - this.now();
    if (wait <= 0) return this.fire();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, wait);
  }

  /** Drops a planned poll (the node closes). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fire(): void {
    this.last = this.now();
    this.poll();
  }
}
