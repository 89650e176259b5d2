/**
 * What a poll node has already reported, kept at module level so that it outlives a redeploy of the node or of
 * the whole flow (Node-RED keeps the loaded module; only a restart of Node-RED starts from empty, and the
 * `persist` option covers that through the node's context store).
 *
 * Keyed by instrument (the lh-server node's instrumentKey, its two URLs), poll node id (stable across
 * redeploys) and source ('A' | 'B'): two poll nodes watching the same instrument each report every error once
 * (they usually feed different paths, e.g. e-mail and a dashboard), and one node never reports an error twice.
 */

export type { ErrorSource as Source } from '../shared/poll-messages';
import { fingerprint, fromFingerprint, hasFields, identityOf, sameError } from '../../client';
import type { ErrorSource as Source } from '../shared/poll-messages';

/** How many resolved ids are remembered, so an id that shows up again is not reported as new. */
const RESOLVED_MEMORY = 1000;

export interface ErrorSnapshot {
  active: Record<string, unknown>;
  resolved: string[];
  /** id → fingerprint of the resolved error (title, time stamp, group, severity), so a reused id is told apart */
  resolvedIdentities?: Record<string, string>;
}

/** Whether `record` is another error than `known` (a record, or a fingerprint) though both carry the same id. */
function another(id: string, known: unknown, record: unknown): boolean {
  const now = identityOf(record);
  if (!now || !hasFields(now)) return false;
  const before = typeof known === 'string' ? fromFingerprint(id, known) : identityOf(known);
  return before !== undefined && hasFields(before) && !sameError({ ...before, id: now.id }, now);
}

export interface Diff<T> {
  raised: T[];
  /** the last record of each error that is gone (as update() stored it, or as a saved snapshot held it) */
  resolved: T[];
}

/** The errors of one source that were reported as raised and not yet as resolved. */
export class SeenErrors {
  private readonly active = new Map<string, unknown>();
  private readonly resolvedIds: string[] = [];
  /** resolved id → the fingerprint of the error that had it ('' when unknown) */
  private readonly resolvedSet = new Map<string, string>();
  /** active errors whose id now names another error (raise() replaced them): their resolution is still to report */
  private displaced: unknown[] = [];

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
    const resolved: T[] = [];
    for (const record of listed) {
      const id = idOf(record);
      if (id === undefined) continue;
      present.add(id);
      if (this.active.has(id)) {
        const before = this.active.get(id);
        if (!another(id, before, record)) {
          this.active.set(id, record);
          continue;
        }
        // the instrument reused the id while its error was listed: the old one is over, this one is new
        this.active.delete(id);
        this.remember(id, before);
        resolved.push(before as T);
      }
      if (this.isRemembered(id, record) || !wanted(record)) continue;
      this.active.set(id, record);
      raised.push(record);
    }
    for (const [id, record] of this.active) {
      if (present.has(id)) continue;
      this.active.delete(id);
      this.remember(id, record);
      resolved.push(record as T);
    }
    return { raised, resolved };
  }

  /** Resolved before under this id, and not another error (a reused id with a different title, time, …, is new). */
  private isRemembered(id: string, record: unknown): boolean {
    if (!this.resolvedSet.has(id)) return false;
    if (!another(id, this.resolvedSet.get(id), record)) return true;
    this.resolvedSet.delete(id);
    const at = this.resolvedIds.indexOf(id);
    if (at >= 0) this.resolvedIds.splice(at, 1);
    return false;
  }

  /** The errors raise() replaced (their id now names another error), once: report them resolved. */
  takeDisplaced(): unknown[] {
    const out = this.displaced;
    this.displaced = [];
    return out;
  }

  /**
   * One error raised from outside a poll (a pushed event): reported when it is neither active nor remembered as
   * resolved and `wanted`; returns whether it is new. A later poll that lists it does not raise it again.
   */
  raise<T>(id: string, record: T, wanted: boolean): boolean {
    if (this.active.has(id)) {
      const before = this.active.get(id);
      if (!another(id, before, record)) {
        this.active.set(id, record);
        return false;
      }
      this.active.delete(id);
      this.remember(id, before);
      this.displaced.push(before);
    }
    if (this.isRemembered(id, record) || !wanted) return false;
    this.active.set(id, record);
    return true;
  }

  /** One error resolved from outside a poll: its last record when it was active (report it), else undefined. */
  resolve(id: string): unknown {
    if (!this.active.has(id)) return undefined;
    const record = this.active.get(id);
    this.active.delete(id);
    this.remember(id, record);
    return record;
  }

  /**
   * Whether `record` is an error reported here: active, or remembered as resolved, under `id` and not another error
   * (an id the instrument reused names a new error, which this memory does not know).
   */
  knowsSame(id: string, record: unknown): boolean {
    if (this.active.has(id)) return !another(id, this.active.get(id), record);
    return this.resolvedSet.has(id) && !another(id, this.resolvedSet.get(id), record);
  }

  /** The last record of an active error, else undefined. */
  activeRecord(id: string): unknown {
    return this.active.get(id);
  }

  /**
   * Keeps at most `max` active errors: the oldest beyond are forgotten as active and remembered as resolved without
   * being reported (so the same error pushed again is not raised twice); returns how many were dropped.
   */
  dropOldest(max: number): number {
    let dropped = 0;
    for (const [id, record] of this.active) {
      if (this.active.size <= max) break;
      this.active.delete(id);
      this.remember(id, record);
      dropped++;
    }
    return dropped;
  }

  /** The ids of the errors reported as raised and not yet as resolved. */
  activeIds(): string[] {
    return [...this.active.keys()];
  }

  snapshot(): ErrorSnapshot {
    const resolvedIdentities: Record<string, string> = {};
    for (const id of this.resolvedIds) {
      const fp = this.resolvedSet.get(id);
      if (fp) resolvedIdentities[id] = fp;
    }
    return { active: Object.fromEntries(this.active), resolved: [...this.resolvedIds], resolvedIdentities };
  }

  restore(snapshot: unknown): void {
    if (!snapshot || typeof snapshot !== 'object') return;
    const s = snapshot as Partial<ErrorSnapshot>;
    if (s.active && typeof s.active === 'object') {
      for (const [id, record] of Object.entries(s.active)) if (!this.active.has(id)) this.active.set(id, record);
    }
    const fps = s.resolvedIdentities && typeof s.resolvedIdentities === 'object' ? s.resolvedIdentities : {};
    if (Array.isArray(s.resolved)) {
      for (const id of s.resolved) {
        if (typeof id !== 'string') continue;
        const fp = (fps as Record<string, unknown>)[id];
        this.remember(id, typeof fp === 'string' && fromFingerprint(id, fp) ? fp : undefined);
      }
    }
  }

  /** Remembers a resolved error by id and identity (`record` is its last record, or already a fingerprint). */
  private remember(id: string, record: unknown): void {
    const identity = typeof record === 'string' ? fromFingerprint(id, record) : identityOf(record);
    const fp = identity ? fingerprint(identity) : '';
    if (this.resolvedSet.has(id)) {
      this.resolvedSet.set(id, fp || (this.resolvedSet.get(id) ?? ''));
      return;
    }
    this.resolvedIds.push(id);
    this.resolvedSet.set(id, fp);
    while (this.resolvedIds.length > RESOLVED_MEMORY) this.resolvedSet.delete(this.resolvedIds.shift() as string);
  }
}

export type ConnectionState = 'unknown' | 'online' | 'offline';

/**
 * Everything one poll node remembers about one instrument. `sources` holds the memory of each polled source; a
 * push channel whose errors no poll lists (they exist only on a socket) keeps its own memory in `channels`, so that
 * a poll never reports them resolved.
 */
export interface WatchState {
  sources: Record<Source, SeenErrors>;
  channels: Map<string, SeenErrors>;
  /** what this node last reported on its connection output (the state itself is the lh-server's) */
  connection: ConnectionState;
  /** true once the state was merged with the context store (persist option) */
  restored: boolean;
}

/** The layout of the memory a poll node saves in its context store (persist option). */
export const SAVED_WATCH_VERSION = 1;

export interface SavedWatch {
  version: typeof SAVED_WATCH_VERSION;
  instrumentKey: string;
  A: ErrorSnapshot;
  B: ErrorSnapshot;
}

export function savedWatch(watch: WatchState, instrumentKey: string): SavedWatch {
  return { version: SAVED_WATCH_VERSION, instrumentKey, A: watch.sources.A.snapshot(), B: watch.sources.B.snapshot() };
}

/**
 * A saved memory read back with its version: version 1 (what 0.1 and 0.2 write) for this instrument; anything
 * else (another instrument, a layout this version does not know) reads as nothing, so every pending error is
 * reported again rather than some silently hidden.
 */
export function readSavedWatch(value: unknown, instrumentKey: string): { A: unknown; B: unknown } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const saved = value as Record<string, unknown>;
  if (saved.version !== SAVED_WATCH_VERSION || saved.instrumentKey !== instrumentKey) return undefined;
  return { A: saved.A, B: saved.B };
}

const watches = new Map<string, WatchState>();

export function watchKey(instrumentKey: string, nodeId: string): string {
  return `${instrumentKey}|${nodeId}`;
}

export function newWatch(): WatchState {
  return { sources: { A: new SeenErrors(), B: new SeenErrors() }, channels: new Map(), connection: 'unknown', restored: false };
}

export function watchFor(key: string): WatchState {
  let watch = watches.get(key);
  if (!watch) {
    watch = newWatch();
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
