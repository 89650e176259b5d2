/**
 * How many instrument leases one replica may hold: the instruments spread over the live replicas, the first
 * `instruments mod replicas` of them (by name) holding ⌈instruments / replicas⌉ and the others ⌊…⌋, so the shares add
 * up to the instruments exactly and every replica ends within one of the even split. A replica under its share
 * takes free leases; one above it releases the excess, so a replica joining or leaving rebalances the lab within a
 * few rounds. Pure: no Redis, no timers.
 */
export function fairShare(instruments: number, replicas: readonly string[], me: string): number {
  if (instruments <= 0) return 0;
  const sorted = [...new Set([...replicas, me])].sort();
  const n = sorted.length;
  const index = sorted.indexOf(me);
  return Math.floor(instruments / n) + (index < instruments % n ? 1 : 0);
}

export interface LeasePlan {
  /** instruments whose lease this replica gives up now (it holds more than its share) */
  release: string[];
  /** instruments whose free lease this replica tries to take, in this order (it stops at its share) */
  acquire: string[];
}

/**
 * What to do this round with a share of `share` leases: `held` are the instruments this replica holds, `others`
 * the ones it does not. Releases the ones beyond the share that rank lowest for this replica, among those another
 * live replica knows (`canRelease`: one only this replica knows would be watched by nobody); tries the others it
 * ranks highest first (rendezvous order), so replicas starting together mostly try different instruments first.
 */
export function planLeases(
  held: readonly string[],
  others: readonly string[],
  share: number,
  rank: (instrument: string) => number,
  canRelease: (instrument: string) => boolean = () => true,
): LeasePlan {
  const byRank = (a: string, b: string): number => rank(b) - rank(a) || (a < b ? -1 : a > b ? 1 : 0);
  if (held.length > share) {
    const sorted = [...held].sort(byRank);
    const excess = held.length - share;
    const release = sorted.reverse().filter(canRelease).slice(0, excess);
    return { release, acquire: [] };
  }
  return { release: [], acquire: held.length < share ? [...others].sort(byRank) : [] };
}
