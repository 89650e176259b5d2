/**
 * The lh-server's *Timeout (ms)*, pure: the runtime and the edit dialog read it with this one rule. Empty (or missing,
 * in a hand-written flow or one made by the admin API) is the default; anything else is a number of milliseconds
 * above 0. A value that is not (0, -5, "abc") was taken as the default without a word: the dialog refuses it now, and
 * a node saved with one says so in the log and uses the default, as it always did.
 */
export const DEFAULT_TIMEOUT_MS = 10000;

/** The timeout `value` asks for in ms: the default when empty or missing, undefined when it is not a valid one. */
export function timeoutSetting(value: unknown): number | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return DEFAULT_TIMEOUT_MS;
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
