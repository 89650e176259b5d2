/**
 * At most `perSecond` emissions per instrument, the latest state always emitted in the end: a change inside the
 * gap is held and sent when the gap ends (trailing), so a storm of changes costs `perSecond` msgs a second and the
 * last word is never lost. Pure: the node keeps `RateGate` and a timer.
 */
export interface RateGate {
  /** when the last emission went out (ms), undefined before the first */
  lastAt?: number;
  /** a change is held until `lastAt + gap` */
  held: boolean;
}

export function gapMs(perSecond: number): number {
  return perSecond > 0 ? Math.ceil(1000 / perSecond) : 0;
}

/**
 * 'now', or the ms to wait before the held change may go out. `now` is the wall clock: one that stepped back (an NTP
 * correction, a VM resumed) puts the last emission in the future, and waiting for it would hold the latest state for
 * as long as the step (an hour back: an hour late). Nor is the gap then taken as passed: a clock that goes back again
 * and again (jitter) would let every change of a storm out. It waits one whole gap, on the caller's timer (monotonic),
 * whose firing lets the held change out whatever the wall clock then says.
 */
export function admit(gate: RateGate, now: number, perSecond: number): 'now' | number {
  const gap = gapMs(perSecond);
  if (gate.lastAt === undefined || now - gate.lastAt >= gap) return 'now';
  if (now < gate.lastAt) return gap;
  return gate.lastAt + gap - now;
}
