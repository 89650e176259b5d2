/**
 * Waits timed by the wall clock (Date.now), which an NTP step or a resumed VM can set back. Pure.
 */

/**
 * The time `until`, set `spanMs` ahead when it was set, as read at `now`: one further ahead than its span can be (the
 * clock was set back since) counts afresh from now, so nothing waits out the step's length (an hour back: an hour);
 * never earlier than it is (a clock jittering back 1 ms per reading would otherwise end every wait at once).
 */
export function withinSpan(until: number, now: number, spanMs: number): number {
  return until - now > spanMs ? now + spanMs : until;
}

/**
 * Now, on a clock that reads as the wall clock did when this process started and then moves as the monotonic clock
 * does: an NTP step or a resumed VM neither sets it back nor forward. For durations and "since when" comparisons
 * between readings of this process that must survive a step (a ladder's hour, "chosen since the run began"); never
 * for a time a person reads or another machine compares.
 */
export function steadyNow(): number {
  return performance.timeOrigin + performance.now();
}
