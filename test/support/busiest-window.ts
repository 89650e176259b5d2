/** The most of `times` (ms) in any window [t, t + windowMs): a poll herd shows here. Used by the spread tests and bench:fleet. */
export function busiestWindow(times: readonly number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let most = 0;
  let j = 0;
  for (let i = 0; i < t.length; i++) {
    while (j < t.length && t[j] < t[i] + windowMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}
