/**
 * The polls the event sockets ask for, at once and bounded by what they cost (issue 31). A socket that (re)connects
 * polls at once: whatever happened while it was down is found now, never held back by a limiter. A pushed frame polls
 * at once when no poll is waiting to start; frames that arrive while one is in flight fold into ONE follow-up poll, so
 * a flood costs at most two polls of the instrument at a time (the one in flight and the follow-up). Over time pushes
 * are bounded by a token bucket: a burst of PUSH_POLL_BURST polls, then one per PUSH_POLL_REFILL_MS. Reconnects are
 * bounded by the socket's own back-off (src/client/events.ts: a socket that closes at once is reopened a few times a
 * minute), and spend a token too, so a flapping socket leaves pushes less room rather than adding to them.
 */

/**
 * Polls pushes may trigger back to back (a full bucket). Every error pushes two frames (raised, resolved): the latency
 * bench's 6 errors a second (Poisson) are 12 frames a second, and with a burst of 3 about one frame in 50 came in a
 * cluster that had spent the bucket and waited up to PUSH_POLL_REFILL_MS for its poll (the steady p99 20-50 ms).
 * With 10 such a cluster is rare (the bucket as a queue at 60 % load: more than 10 waiting well under once in 1,000)
 * and the sustained bound is unchanged.
 */
export const PUSH_POLL_BURST = 10;
/**
 * One token back per this many ms: at most 20 push-triggered polls a second per loop once the burst is spent (0.3
 * allowed 40, one per 25 ms). A lab's errors come far slower, so the bucket is full whenever an error is pushed; only
 * a flood ever waits, for at most this long.
 */
export const PUSH_POLL_REFILL_MS = 50;

/** A token bucket: `burst` tokens, one more every `refillMs`, on the clock `now`. */
export class PollBudget {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst: number = PUSH_POLL_BURST,
    private readonly refillMs: number = PUSH_POLL_REFILL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.at = now();
  }

  /** Takes a token when one is there (true), else takes nothing (false). */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** A poll that is never held back (a reconnect's) still costs: a token if one is left, nothing is owed. */
  spend(): void {
    this.refill();
    this.tokens = Math.max(0, this.tokens - 1);
  }

  /** ms until a token is there (0 when one is). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) * this.refillMs);
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, t - this.at) / this.refillMs);
    this.at = t;
  }
}

/** What LivePolls needs of a poll loop (PollLoop). */
export interface TriggeredLoop {
  /** Polls at once, or right after the poll in flight (`fromFrame`: a follow-up the poll in flight may drop). */
  trigger(fromFrame?: boolean): void;
  /** A poll is asked for that has not started yet: anything that happens now is seen by it. */
  readonly pollPending: boolean;
}

/** The polls one loop's event socket asks for: a reconnect's at once, pushes' at once or folded, within budget. */
export class LivePolls {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly loop: TriggeredLoop,
    private readonly budget: PollBudget = new PollBudget(),
  ) {}

  /** The socket (re)connected: poll at once (what happened while it was down), whatever was polled a moment ago. */
  connected(): void {
    if (this.stopped) return;
    this.budget.spend();
    this.cancelWait(); // a push waiting for a token is served by this poll, which starts after it
    this.loop.trigger();
  }

  /** A pushed frame asks for a poll. */
  frame(): void {
    if (this.stopped || this.timer) return; // a poll for the frames before is already waiting for a token
    if (this.loop.pollPending) return; // folded: the poll asked for has not started, it sees this frame too
    if (this.budget.take()) return this.loop.trigger(true);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.frame();
    }, this.budget.waitMs());
  }

  /** Drops a waiting poll (the node closes). */
  stop(): void {
    this.stopped = true;
    this.cancelWait();
  }

  private cancelWait(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
