/**
 * A model clock for code that takes `now`, `setTimer` and `clearTimer` options (StateNode, the rate gates): time moves
 * only when the test runs it, and due timers fire in time order (then in the order they were set).
 */
export interface ModelTimer {
  at: number;
  /** the delay it was set with */
  ms: number;
  id: number;
  fn: () => void;
}

export class ModelClock {
  now = 0;
  private nextId = 0;
  private readonly timers: ModelTimer[] = [];

  /** The options to hand over: `now`, `setTimer`, `clearTimer`. */
  readonly options = {
    now: (): number => this.now,
    setTimer: (fn: () => void, ms: number): unknown => {
      const timer = { at: this.now + ms, ms, id: this.nextId++, fn };
      this.timers.push(timer);
      return timer.id;
    },
    clearTimer: (id: unknown): void => {
      const i = this.timers.findIndex((t) => t.id === id);
      if (i >= 0) this.timers.splice(i, 1);
    },
  };

  /** Fires every timer due by `to`, each at its time (`around` wraps each firing), and ends at `to`. */
  runUntil(to: number, around: (timer: ModelTimer, fire: () => void) => void = (_t, fire) => fire()): void {
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const timer = this.timers[0];
      if (!timer || timer.at > to) break;
      this.timers.shift();
      this.now = timer.at;
      around(timer, timer.fn);
    }
    this.now = to;
  }
}
