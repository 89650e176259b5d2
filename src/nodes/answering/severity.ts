/**
 * The severity filter. Known levels are ranked; a severity the instrument sends that is not known here is
 * never filtered out (an unknown level must not hide an error).
 */
const RANK: Record<string, number> = {
  information: 0,
  info: 0,
  warning: 1,
  error: 2,
  fatal: 3,
  critical: 3,
};

export function severityRank(severity: unknown): number | undefined {
  return typeof severity === 'string' ? RANK[severity.trim().toLowerCase()] : undefined;
}

/** A predicate for the minimum severity chosen in the dialog ('' = every error). */
export function severityFilter(minimum: unknown): (severity: unknown) => boolean {
  const min = severityRank(minimum);
  if (min === undefined) return () => true;
  return (severity) => {
    const rank = severityRank(severity);
    return rank === undefined || rank >= min;
  };
}
