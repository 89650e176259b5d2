/**
 * A cap on the polls in flight in this Node-RED (issue 31): a burst (1,000 instruments pushing an error each at once,
 * a reconnect wave of the fleet) never has more than MAX_POLLS_IN_FLIGHT requests under way; the others wait for a
 * permit, served in order of arrival, without a fixed wait. Bounds the sockets, memory and event-loop work of a burst
 * instead of delaying its first polls.
 */

/**
 * Polls under way at most, process-wide. Measured with a burst of one error on each of 1,000 instruments
 * (LH_BENCH_PUSH_BURST=1 bench:fleet, one run each, shared 2-core machine): 64 queued the burst behind slow round
 * trips (p50 / p99 3.6 / 6.3 s, 136 errors resolved before their poll); no cap 2.6 / 2.8 s with a 1.3 s event-loop
 * stall and +110 MB; 256 gave 1.3 / 2.0 s, 0 missed, event-loop delay p99 5.8 ms.
 */
export const MAX_POLLS_IN_FLIGHT = 256;

export type Release = () => void;

export class PollPermits {
  private active = 0;
  private readonly queue: ((release: Release) => void)[] = [];

  constructor(private readonly max: number = MAX_POLLS_IN_FLIGHT) {}

  /** A permit, at once when fewer than `max` are out and nobody waits, else after those who asked before. */
  acquire(): Promise<Release> {
    if (this.active < this.max && this.queue.length === 0) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  /**
   * A permit now if one is free and nobody waits, else none (nothing queued): for work that is worth doing only when
   * there is room (a deck photo), never ahead of a waiting poll.
   */
  tryAcquire(): Release | undefined {
    if (this.active >= this.max || this.queue.length > 0) return undefined;
    this.active++;
    return this.releaser();
  }

  /** Every permit out or a poll waiting for one: the process is in a burst, work that can wait should. */
  get busy(): boolean {
    return this.active >= this.max || this.queue.length > 0;
  }

  /** Permits out. */
  get inFlight(): number {
    return this.active;
  }

  /** Polls waiting for a permit. */
  get waiting(): number {
    return this.queue.length;
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return; // a second call must not free another poll's permit
      released = true;
      const next = this.queue.shift();
      if (next) next(this.releaser());
      else this.active--;
    };
  }
}

/** The permits every poll loop of this Node-RED shares. */
export const pollPermits = new PollPermits();
