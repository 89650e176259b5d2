/**
 * The simulator's timers: every timer and delay it starts, so that stop() clears them all at once, and a
 * generation count that stop() bumps so that work which outlived a stop sees the change and gives up.
 */
export class TimerSet {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** resolvers of delays still running: stopAll() settles them so nothing awaits forever */
  private readonly waiting = new Set<() => void>();
  private gen = 0;

  /** Bumped by every stopAll(). */
  get generation(): number {
    return this.gen;
  }

  /** Runs fn after ms; returns a function that cancels the timer. */
  schedule(ms: number, fn: () => void): () => void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return () => {
      clearTimeout(t);
      this.timers.delete(t);
    };
  }

  /** A delay that stopAll() cuts short (callers check the generation or whether the simulator runs afterwards). */
  delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.waiting.delete(done);
        resolve();
      };
      this.waiting.add(done);
      this.schedule(ms, done);
    });
  }

  /** Clears every timer, settles every delay, bumps the generation. */
  stopAll(): void {
    this.gen++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const resolve of waiting) resolve();
  }
}
