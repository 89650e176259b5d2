/**
 * What a poll node has already reported, kept at module level so that it outlives a redeploy of the node or of
 * the whole flow (Node-RED keeps the loaded module; only a restart of Node-RED starts from empty, and the
 * `persist` option covers that through the node's context store).
 *
 * Keyed by instrument (the lh-server node's instrumentKey, its two URLs), poll node id (stable across
 * redeploys) and source ('A' | 'B'): two poll nodes watching the same instrument each report every error once
 * (they usually feed different paths, e.g. e-mail and a dashboard), and one node never reports an error twice.
 */

export type Source = 'A' | 'B';

/** How many resolved ids are remembered, so an id that shows up again is not reported as new. */
const RESOLVED_MEMORY = 1000;

export interface ErrorSnapshot {
  active: Record<string, unknown>;
  resolved: string[];
}

export interface Diff<T> {
  raised: T[];
  resolved: unknown[];
}

/** The errors of one source that were reported as raised and not yet as resolved. */
export class SeenErrors {
  private readonly active = new Map<string, unknown>();
  private readonly resolvedIds: string[] = [];
  private readonly resolvedSet = new Set<string>();

  get size(): number {
    return this.active.size;
  }

  /**
   * Compares one successful poll with what was reported: `listed` is every error still pending (whatever its
   * severity), `wanted` tells which of them may be reported. Updates the memory and returns what to emit.
   */
  update<T>(listed: T[], idOf: (record: T) => string | undefined, wanted: (record: T) => boolean): Diff<T> {
    const raised: T[] = [];
    const present = new Set<string>();
    for (const record of listed) {
      const id = idOf(record);
      if (id === undefined) continue;
      present.add(id);
      if (this.active.has(id)) {
        this.active.set(id, record);
        continue;
      }
      if (this.resolvedSet.has(id) || !wanted(record)) continue;
      this.active.set(id, record);
      raised.push(record);
    }
    const resolved: unknown[] = [];
    for (const [id, record] of this.active) {
      if (present.has(id)) continue;
      this.active.delete(id);
      this.remember(id);
      resolved.push(record);
    }
    return { raised, resolved };
  }

  snapshot(): ErrorSnapshot {
    return { active: Object.fromEntries(this.active), resolved: [...this.resolvedIds] };
  }

  restore(snapshot: unknown): void {
    if (!snapshot || typeof snapshot !== 'object') return;
    const s = snapshot as Partial<ErrorSnapshot>;
    if (s.active && typeof s.active === 'object') {
      for (const [id, record] of Object.entries(s.active)) if (!this.active.has(id)) this.active.set(id, record);
    }
    if (Array.isArray(s.resolved)) for (const id of s.resolved) if (typeof id === 'string') this.remember(id);
  }

  private remember(id: string): void {
    if (this.resolvedSet.has(id)) return;
    this.resolvedIds.push(id);
    this.resolvedSet.add(id);
    while (this.resolvedIds.length > RESOLVED_MEMORY) this.resolvedSet.delete(this.resolvedIds.shift() as string);
  }
}

export type ConnectionState = 'unknown' | 'online' | 'offline';

/** Everything one poll node remembers about one instrument. */
export interface WatchState {
  sources: Record<Source, SeenErrors>;
  connection: ConnectionState;
  /** consecutive polls that found the instrument unreachable */
  unreachablePolls: number;
  /** true once the state was merged with the context store (persist option) */
  restored: boolean;
}

const watches = new Map<string, WatchState>();

export function watchKey(instrumentKey: string, nodeId: string): string {
  return `${instrumentKey}|${nodeId}`;
}

export function watchFor(key: string): WatchState {
  let watch = watches.get(key);
  if (!watch) {
    watch = { sources: { A: new SeenErrors(), B: new SeenErrors() }, connection: 'unknown', unreachablePolls: 0, restored: false };
    watches.set(key, watch);
  }
  return watch;
}

/** A removed node's memory is dropped (its id will not come back). */
export function forgetWatch(key: string): void {
  watches.delete(key);
}

/** Every watch of every node: what a restart of Node-RED does (used by tests). */
export function forgetAllWatches(): void {
  watches.clear();
}
