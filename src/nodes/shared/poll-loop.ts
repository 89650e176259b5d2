import type { PollPermits, Release } from './poll-permits';

/** How early a timer may fire by Date.now() (libuv's clock) and still count as on time. */
const EARLY_TIMER_MS = 10;

/**
 * A self-rescheduling poll: the next poll is planned only when the previous one has finished, so polls never
 * overlap; the delay a poll returns counts from that poll's start, so the poll's own duration does not stretch
 * the interval (a poll that took longer is followed at once). `trigger()` polls at once (or right after a running
 * poll): a planned poll never holds it back, it is replaced. `catchUp(since)` polls unless one started after `since`.
 * `stop()` clears the timer and makes the result of a poll still in flight irrelevant (the caller checks
 * `stopped`).
 */
export class PollLoop {
  private timer?: NodeJS.Timeout;
  private immediate?: NodeJS.Immediate;
  private running = false;
  private again = false;
  /** trigger() planned a poll at once that has not started yet */
  private triggered = false;
  /** the follow-up (`again`) was asked for by something else than a frame: dropFollowUp() leaves it */
  private againPinned = false;
  /** a poll is waiting for its permit: it has not read the instrument yet */
  private waitingPermit = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** when the planned poll is due (Date.now() time) */
  private dueAt = 0;
  private stoppedValue = false;

  /**
   * `poll` gets its start time (Date.now(), or when it was due if its timer fired early) and returns the delay from
   * that start to the start of the next poll, in ms.
   */
  constructor(
    private readonly poll: (startedAt: number) => Promise<number>,
    /** the process's cap on polls in flight (the nodes pass pollPermits); without it, no cap */
    private readonly permits?: PollPermits,
  ) {}

  get stopped(): boolean {
    return this.stoppedValue;
  }

  start(delayMs = 0): void {
    this.schedule(delayMs, true);
  }

  /**
   * `fromFrame`: a pushed frame asks for it; the poll in flight may find that its answer already shows what the
   * frames said and drop their follow-up (dropFollowUp). Anything else (a reconnect, a msg) always gets its follow-up.
   */
  trigger(fromFrame = false): void {
    if (this.stoppedValue || this.waitingPermit) return; // a poll that has not started yet sees what asked for this one
    if (this.running) {
      this.again = true;
      if (!fromFrame) this.againPinned = true;
      return;
    }
    this.triggered = true;
    this.schedule(0, true);
  }

  /**
   * A poll was asked for (trigger) that has not started yet: whatever happens now, it sees. A poll in flight does
   * not count (it may have read the instrument before).
   */
  get pollPending(): boolean {
    return !this.stoppedValue && (this.again || this.triggered || this.waitingPermit);
  }

  /**
   * Polls (as `trigger()`) unless a poll started after `since` (Date.now() time): a catch-up asked for at `since`
   * (a socket reconnected) is already done by any poll that started later (one of the same ms may have gone first).
   */
  catchUp(since: number): void {
    if (this.lastStart > since) return;
    this.trigger();
  }

  /**
   * Called by the poll in flight: the follow-up poll that frames asked for meanwhile is not needed (its answer shows
   * what they said). Leaves one asked for by anything else. True when a follow-up was dropped.
   */
  dropFollowUp(): boolean {
    if (!this.running || !this.again || this.againPinned) return false;
    this.again = false;
    return true;
  }

  stop(): void {
    this.stoppedValue = true;
    this.unplan();
  }

  private unplan(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /**
   * `asked`: a poll at once that something asked for (a frame, a reconnect, a msg, a follow-up) runs after the I/O at
   * hand, not a timer's millisecond later. A planned poll keeps its timer, also when its delay is already over (a
   * poll that took longer, or returned 0): a poll that returns at once asking for no wait then polls at most about
   * once a millisecond (Node's minimum), not on every turn of the event loop (a core busy with nothing but polls).
   */
  private schedule(delayMs: number, asked = false): void {
    if (this.stoppedValue) return;
    this.unplan();
    if (delayMs > 0) this.triggered = false;
    this.dueAt = Date.now() + delayMs;
    if (asked && delayMs <= 0) this.immediate = setImmediate(() => void this.tick());
    else this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.immediate = undefined;
    this.running = true;
    // one of the process's permits first (a burst waits in order of arrival); a poll asked for meanwhile is this one
    let release: Release = () => undefined;
    if (this.permits) {
      this.waitingPermit = true;
      release = await this.permits.acquire();
      this.waitingPermit = false;
    }
    this.triggered = false;
    if (this.stoppedValue) {
      release();
      this.running = false;
      return;
    }
    // a timer may fire a millisecond before its time by Date.now() (libuv's clock): the poll then counts from when
    // it was due, or a poll planned for a slot would find the slot still ahead and poll again a millisecond later
    // Wall-clock readings: one set back (an NTP step, a VM resumed) puts dueAt far ahead; counting from it, or from a
    // start the clock went back behind during the poll, would hold the next poll for the step's length (an error
    // poll silent for an hour). Only an early firing counts from dueAt, and the wait never exceeds the poll's delay.
    const now = Date.now();
    const started = this.dueAt > now && this.dueAt - now <= EARLY_TIMER_MS ? this.dueAt : now;
    this.lastStart = started;
    let delay: number;
    try {
      delay = await this.poll(started);
    } catch {
      delay = DEFAULT_INTERVAL_MS;
    } finally {
      release();
      this.running = false;
    }
    const followUp = this.again;
    this.again = false;
    this.againPinned = false;
    this.schedule(followUp ? 0 : Math.max(0, delay - Math.max(0, Date.now() - started)), followUp);
    if (followUp) this.triggered = true;
  }
}

export const MIN_INTERVAL_MS = 500;
export const DEFAULT_INTERVAL_MS = 5000;
export const MAX_BACKOFF_MS = 60000;
/** 24 h: a longer interval would overflow the timer (2^31-1 ms) and poll every millisecond. */
export const MAX_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The configured interval in seconds, as ms, clamped to 0.5 s .. 24 h. */
export function intervalMs(seconds: unknown): number {
  const s = Number(seconds);
  if (seconds === '' || seconds === undefined || seconds === null || !Number.isFinite(s)) return DEFAULT_INTERVAL_MS;
  return Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, Math.round(s * 1000)));
}

/** Up to 10 % more than the delay, so many nodes backing off together do not retry in lock-step. */
export function withJitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 + 0.1 * random()));
}

/**
 * The first delay after a deploy: up to 10 % shorter than the interval, so nodes started together spread over a
 * tenth of it, and keep that phase (the steady interval is exact: no error waits longer than one interval).
 */
export function desyncMs(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - 0.1 * random()));
}

/**
 * The delay after a poll: the interval while everything answers and for the first failed polls; once the
 * instrument counts as offline (or a login is refused) it doubles with each further failure, up to a cap
 * (60 s, or the interval when that is longer).
 */
export function backoffMs(baseMs: number, failures: number, graceFailures: number): number {
  const beyond = failures - graceFailures;
  if (failures <= 0 || beyond < 0) return baseMs;
  const cap = Math.max(MAX_BACKOFF_MS, baseMs);
  return Math.min(cap, baseMs * 2 ** Math.min(beyond + 1, 20));
}
