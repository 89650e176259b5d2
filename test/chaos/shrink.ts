/**
 * Delta debugging (Zeller's ddmin) over a list: the shortest sublist found for which `fails` still holds, trying
 * complements and halves at ever finer granularity. `fails` is asynchronous (a chaos run) and is never asked about
 * the same sublist twice; `budget` caps the number of runs (the best sublist so far is returned when it runs out).
 */
export async function ddmin<T>(
  items: readonly T[],
  fails: (subset: T[]) => Promise<boolean>,
  budget = Infinity,
): Promise<{ result: T[]; runs: number }> {
  let current = [...items];
  let n = 2;
  let runs = 0;
  const asked = new Map<string, boolean>();
  const test = async (subset: T[]): Promise<boolean> => {
    const key = subset.map((x) => items.indexOf(x)).join(',');
    const known = asked.get(key);
    if (known !== undefined) return known;
    runs++;
    const result = await fails(subset);
    asked.set(key, result);
    return result;
  };
  while (current.length >= 2 && runs < budget) {
    const size = Math.ceil(current.length / n);
    const chunks: T[][] = [];
    for (let i = 0; i < current.length; i += size) chunks.push(current.slice(i, i + size));
    let reduced = false;
    for (const chunk of chunks) {
      if (runs >= budget) break;
      if (await test(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && chunks.length > 2) {
      for (const chunk of chunks) {
        if (runs >= budget) break;
        const complement = current.filter((x) => !chunk.includes(x));
        if (await test(complement)) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (!reduced) {
      if (n >= current.length) break;
      n = Math.min(current.length, 2 * n);
    }
  }
  // a single fault may not be needed at all (the instrument's behaviour alone fails)
  if (current.length === 1 && runs < budget && (await test([]))) current = [];
  return { result: current, runs };
}
