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
