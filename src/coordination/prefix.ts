/** The key prefix rule, pure (no Node.js modules), so the runtime check and the editor's field check are one rule. */

/** A key prefix as configured: letters, digits and `-_.:` only, 1..64 characters; undefined when not valid. */
export function validPrefix(value: unknown): string | undefined {
  const s = typeof value === 'string' ? value.trim() : '';
  return /^[A-Za-z0-9_.:-]{1,64}$/.test(s) ? s : undefined;
}
