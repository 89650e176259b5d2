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
import { type ErrorIdentity, fingerprint, fromFingerprint, hasFields, identityOf, sameError } from '../../client';
import { findHome, homeOf, slot } from '../../instrument';
import type { Node } from '../shared/node-red';
import type { ErrorSource as Source } from '../shared/poll-messages';

/** How many resolved ids are remembered, so an id that shows up again is not reported as new. */
const RESOLVED_MEMORY = 1000;
/** Errors remembered as resolved per id (an instrument that reuses ids, or lists several errors under one). */
const RESOLVED_PER_ID = 4;

export interface ErrorSnapshot {
  /** id → the last record of the (first) active error under it */
  active: Record<string, unknown>;
  /** id → the other active errors under the same id (one poll listed several errors under one id) */
  activeMore?: Record<string, unknown[]>;
  resolved: string[];
  /** id → fingerprint of the resolved error (title, time stamp, group, severity), so a reused id is told apart */
  resolvedIdentities?: Record<string, string>;
  /** id → fingerprints of the errors resolved under it before that one */
  resolvedMore?: Record<string, string[]>;
}

/**
 * The identity of a record as it was first read: a record is compared at every poll while it is in memory, and its
 * identity (four hashes) is worked out once. Keyed by the record object, so nothing outlives the record.
 */
const identities = new WeakMap<object, ErrorIdentity | null>();

function identityOfRecord(record: unknown): ErrorIdentity | undefined {
  if (!record || typeof record !== 'object') return identityOf(record);
  let identity = identities.get(record);
  if (identity === undefined) identities.set(record, (identity = identityOf(record) ?? null));
  return identity ?? undefined;
}

/** Whether `record` is another error than `known` (a record, or a fingerprint) though both carry the same id. */
function another(id: string, known: unknown, record: unknown): boolean {
  const now = identityOfRecord(record);
  if (!now || !hasFields(now)) return false;
  const before = typeof known === 'string' ? fromFingerprint(id, known) : identityOfRecord(known);
  return before !== undefined && hasFields(before) && !sameError({ ...before, id: now.id }, now);
}

/** Whether two records under one id name one error with the very same identity (not only compatible ones). */
function identical(id: string, a: unknown, b: unknown): boolean {
  const x = identityOfRecord(a);
  const y = identityOfRecord(b);
  return !another(id, a, b) && (x ? fingerprint(x) : '') === (y ? fingerprint(y) : '');
}

/**
 * The distinct errors of one id in one list, in list order: a record that is the same error as one before it (the
 * instrument listed it twice) counts once, its last record kept.
 */
function distinctUnder<T>(id: string, records: T[]): T[] {
  const out: T[] = [];
  for (const record of records) {
    const at = out.findIndex((kept) => !another(id, kept, record));
    if (at < 0) out.push(record);
    else out[at] = record;
  }
  return out;
}

/**
 * Pairs the errors listed under one id with those active under it: exact identities first, then compatible ones (a
 * record lacking a field is not another error because of it alone). Returns, per listed error, the index of its
 * active entry or -1 (new).
 */
function pairUp(id: string, listed: unknown[], active: unknown[]): number[] {
  // the usual case, one error under the id in the list and in memory: one comparison
  if (listed.length === 1 && active.length <= 1) return [active.length === 1 && !another(id, active[0], listed[0]) ? 0 : -1];
  const taken = new Set<number>();
  const pairs = listed.map(() => -1);
  for (const exact of [true, false]) {
    listed.forEach((record, i) => {
      if (pairs[i] >= 0) return;
      const at = active.findIndex(
        (known, j) => !taken.has(j) && (exact ? identical(id, known, record) : !another(id, known, record)),
      );
      if (at >= 0) {
        pairs[i] = at;
        taken.add(at);
      }
    });
  }
  return pairs;
}

export interface Diff<T> {
  raised: T[];
  /** the last record of each error that is gone (as update() stored it, or as a saved snapshot held it) */
  resolved: T[];
}

/**
 * The errors of one source that were reported as raised and not yet as resolved. An error is its id together with
 * what the instrument says of it (0.3): an instrument that lists several errors under one id in one answer has each
 * of them raised once while listed and resolved once when gone (an answer to such an id is refused as ambiguous, see
 * client/error-identity.ts).
 */
export class SeenErrors {
  /** id → the active errors under it (one, or several when a list shows several errors under the id) */
  private readonly active = new Map<string, unknown[]>();
  private count = 0;
  private readonly resolvedIds: string[] = [];
  /** resolved id → the fingerprints of the errors that had it, newest last ('' when unknown) */
  private readonly resolvedSet = new Map<string, string[]>();
  /** active errors whose id now names another error (raise() replaced them): their resolution is still to report */
  private displaced: unknown[] = [];

  get size(): number {
    return this.count;
  }

  private setActive(id: string, records: unknown[]): void {
    this.count += records.length - (this.active.get(id)?.length ?? 0);
    if (records.length === 0) this.active.delete(id);
    else this.active.set(id, records);
  }

  /**
   * Compares one successful poll with what was reported: `listed` is every error still pending (whatever its
   * severity), `wanted` tells which of them may be reported. Updates the memory and returns what to emit.
   */
  update<T>(listed: T[], idOf: (record: T) => string | undefined, wanted: (record: T) => boolean): Diff<T> {
    const raised: T[] = [];
    const resolved: T[] = [];
    const byId = new Map<string, T[]>();
    for (const record of listed) {
      const id = idOf(record);
      if (id === undefined) continue;
      const group = byId.get(id);
      if (group) group.push(record);
      else byId.set(id, [record]);
    }
    for (const [id, group] of byId) {
      const errors = distinctUnder(id, group);
      const before = this.active.get(id) ?? [];
      const pairs = pairUp(id, errors, before);
      const kept: unknown[] = [];
      errors.forEach((record, i) => {
        if (pairs[i] >= 0) kept.push(record);
      });
      // active errors under the id that the list no longer shows: over (a reused id, or one of several gone)
      before.forEach((record, j) => {
        if (pairs.includes(j)) return;
        this.remember(id, record);
        resolved.push(record as T);
      });
      errors.forEach((record, i) => {
        if (pairs[i] >= 0 || this.isRemembered(id, record) || !wanted(record)) return;
        kept.push(record);
        raised.push(record);
      });
      this.setActive(id, kept);
    }
    // (a Map may lose its current entry while iterated)
    for (const [id, records] of this.active) {
      if (byId.has(id)) continue;
      this.setActive(id, []);
      for (const record of records) {
        this.remember(id, record);
        resolved.push(record as T);
      }
    }
    return { raised, resolved };
  }

  /** Resolved before under this id, and not another error (a reused id with a different title, time, …, is new). */
  private isRemembered(id: string, record: unknown): boolean {
    const fps = this.resolvedSet.get(id);
    return !!fps && fps.some((fp) => !another(id, fp, record));
  }

  /** The errors raise() replaced (their id now names another error), once: report them resolved. */
  takeDisplaced(): unknown[] {
    const out = this.displaced;
    this.displaced = [];
    return out;
  }

  /**
   * One error raised from outside a poll (a pushed event): reported when it is neither active nor remembered as
   * resolved and `wanted`; returns whether it is new. A later poll that lists it does not raise it again. A pushed
   * error under an active id that is another error means the instrument reused the id: the errors under it are over.
   */
  raise<T>(id: string, record: T, wanted: boolean): boolean {
    const before = this.active.get(id) ?? [];
    const at = before.findIndex((known) => !another(id, known, record));
    if (at >= 0) {
      before[at] = record;
      return false;
    }
    if (before.length > 0) {
      this.setActive(id, []);
      for (const known of before) {
        this.remember(id, known);
        this.displaced.push(known);
      }
    }
    if (this.isRemembered(id, record) || !wanted) return false;
    this.setActive(id, [record]);
    return true;
  }

  /**
   * One error resolved from outside a poll: its last record when it was active (report it), else undefined. Several
   * errors under the id: all are over; the others are reported through takeDisplaced().
   */
  resolve(id: string): unknown {
    const records = this.active.get(id);
    if (!records) return undefined;
    this.setActive(id, []);
    for (const record of records) this.remember(id, record);
    this.displaced.push(...records.slice(1));
    return records[0];
  }

  /**
   * Whether `record` is an error reported here: active, or remembered as resolved, under `id` and not another error
   * (an id the instrument reused names a new error, which this memory does not know).
   */
  knowsSame(id: string, record: unknown): boolean {
    if ((this.active.get(id) ?? []).some((known) => !another(id, known, record))) return true;
    if (this.active.has(id)) return false;
    return this.isRemembered(id, record);
  }

  /** Whether `record` is an error remembered as resolved under `id` (whatever is active under it now). */
  resolvedBefore(id: string, record: unknown): boolean {
    return this.isRemembered(id, record);
  }

  /** The last record of an active error (the first one under the id), else undefined. */
  activeRecord(id: string): unknown {
    return this.active.get(id)?.[0];
  }

  /**
   * Keeps at most `max` active errors: the oldest beyond are forgotten as active and remembered as resolved without
   * being reported (so the same error pushed again is not raised twice); returns how many were dropped.
   */
  dropOldest(max: number): number {
    let dropped = 0;
    for (const [id, records] of [...this.active]) {
      if (this.count <= max) break;
      this.setActive(id, []);
      for (const record of records) this.remember(id, record);
      dropped += records.length;
    }
    return dropped;
  }

  /** The ids of the errors reported as raised and not yet as resolved. */
  activeIds(): string[] {
    return [...this.active.keys()];
  }

  snapshot(): ErrorSnapshot {
    const active: Record<string, unknown> = {};
    const activeMore: Record<string, unknown[]> = {};
    for (const [id, records] of this.active) {
      active[id] = records[0];
      if (records.length > 1) activeMore[id] = records.slice(1);
    }
    const resolvedIdentities: Record<string, string> = {};
    const resolvedMore: Record<string, string[]> = {};
    for (const id of this.resolvedIds) {
      const fps = this.resolvedSet.get(id) ?? [];
      const last = fps[fps.length - 1];
      if (last) resolvedIdentities[id] = last;
      if (fps.length > 1) resolvedMore[id] = fps.slice(0, -1);
    }
    return {
      active,
      ...(Object.keys(activeMore).length > 0 ? { activeMore } : {}),
      resolved: [...this.resolvedIds],
      resolvedIdentities,
      ...(Object.keys(resolvedMore).length > 0 ? { resolvedMore } : {}),
    };
  }

  restore(snapshot: unknown): void {
    if (!snapshot || typeof snapshot !== 'object') return;
    const s = snapshot as Partial<ErrorSnapshot>;
    const more = s.activeMore && typeof s.activeMore === 'object' ? (s.activeMore as Record<string, unknown>) : {};
    if (s.active && typeof s.active === 'object') {
      for (const [id, record] of Object.entries(s.active)) {
        if (this.active.has(id)) continue;
        const others = Array.isArray(more[id]) ? (more[id] as unknown[]) : [];
        this.setActive(id, [record, ...others]);
      }
    }
    const fps = s.resolvedIdentities && typeof s.resolvedIdentities === 'object' ? s.resolvedIdentities : {};
    const older = s.resolvedMore && typeof s.resolvedMore === 'object' ? (s.resolvedMore as Record<string, unknown>) : {};
    if (Array.isArray(s.resolved)) {
      for (const id of s.resolved) {
        if (typeof id !== 'string') continue;
        const before = Array.isArray(older[id]) ? (older[id] as unknown[]) : [];
        for (const fp of before) if (typeof fp === 'string' && fromFingerprint(id, fp)) this.remember(id, fp);
        const fp = (fps as Record<string, unknown>)[id];
        this.remember(id, typeof fp === 'string' && fromFingerprint(id, fp) ? fp : undefined);
      }
    }
  }

  /** Remembers a resolved error by id and identity (`record` is its last record, or already a fingerprint). */
  private remember(id: string, record: unknown): void {
    const identity = typeof record === 'string' ? fromFingerprint(id, record) : identityOfRecord(record);
    const fp = identity ? fingerprint(identity) : '';
    const fps = this.resolvedSet.get(id);
    if (fps) {
      // an unknown identity ('') adds nothing to what is known of the id
      if (fp === '' && fps.length > 0) return;
      const kept = fps.filter((f) => f !== fp && f !== '');
      this.resolvedSet.set(id, [...kept, fp].slice(-RESOLVED_PER_ID));
      return;
    }
    this.resolvedIds.push(id);
    this.resolvedSet.set(id, [fp]);
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
  /**
   * msgs a closed instance of the node could not send: its next instance (a redeploy) sends them before anything of
   * its own; in memory only (a restart of Node-RED loses them: what is saved leaves their errors out, see savedWatch)
   */
  unsent?: Unsent[];
}

/** One msg (node.send's argument) a closed instance of a poll node handed to its next instance, and its errors. */
export interface Unsent {
  out: Parameters<Node['send']>[0];
  /** the polled errors the msg reports (a pushed firmware error's are not saved: none here) */
  errors: UnsentError[];
  /**
   * coordinated: releases the msg's claim once it is sent (ErrorGate.filter's `hold`), so that it is settled only
   * then; a stop before leaves it unsettled in Redis, for the next holder to send again
   */
  release?: () => void;
}

export interface UnsentError {
  list: 'raised' | 'resolved';
  source: Source;
  id: string;
  record: unknown;
}

/** The layout of the memory a poll node saves in its context store (persist option). */
export const SAVED_WATCH_VERSION = 1;

export interface SavedWatch {
  version: typeof SAVED_WATCH_VERSION;
  instrumentKey: string;
  A: ErrorSnapshot;
  B: ErrorSnapshot;
}

/**
 * What a poll node saves: its memory, less what waits unsent (`watch.unsent`): those msgs go with the process at a
 * stop, so a restart must not read them as reported. An error raised unsent is left out (the next start raises it
 * again from the list), one resolved unsent is still active (the next start resolves it), once its msg is sent the
 * next save has them as they are.
 */
export function savedWatch(watch: WatchState, instrumentKey: string): SavedWatch {
  const held = (watch.unsent ?? []).flatMap((u) => u.errors);
  const of = (source: Source): ErrorSnapshot =>
    withheld(
      watch.sources[source].snapshot(),
      held.filter((e) => e.source === source),
    );
  return { version: SAVED_WATCH_VERSION, instrumentKey, A: of('A'), B: of('B') };
}

/** `snapshot` as if the msgs of `errors` had not been sent (see savedWatch). Pure. */
export function withheld(snapshot: ErrorSnapshot, errors: readonly UnsentError[]): ErrorSnapshot {
  if (errors.length === 0) return snapshot;
  const active = { ...snapshot.active };
  const activeMore = { ...(snapshot.activeMore ?? {}) };
  const resolvedIdentities = { ...(snapshot.resolvedIdentities ?? {}) };
  const resolvedMore = { ...(snapshot.resolvedMore ?? {}) };
  let resolved = [...snapshot.resolved];
  const activeUnder = (id: string): unknown[] => (id in active ? [active[id], ...(activeMore[id] ?? [])] : []);
  const setActive = (id: string, records: unknown[]): void => {
    delete active[id];
    delete activeMore[id];
    if (records.length > 0) active[id] = records[0];
    if (records.length > 1) activeMore[id] = records.slice(1);
  };
  for (const { list, id, record } of errors) {
    if (list === 'raised') {
      setActive(
        id,
        activeUnder(id).filter((known) => another(id, known, record)),
      );
      continue;
    }
    // resolved: only an error this memory remembers resolved (a pushed firmware error is kept elsewhere, unsaved)
    if (!resolved.includes(id)) continue;
    const fps = [...(resolvedMore[id] ?? []), ...(id in resolvedIdentities ? [resolvedIdentities[id]] : [])];
    const left = fps.filter((fp) => another(id, fp, record));
    if (left.length === fps.length && fps.length > 0) continue;
    if (left.length > 0) {
      resolvedIdentities[id] = left[left.length - 1];
      if (left.length > 1) resolvedMore[id] = left.slice(0, -1);
      else delete resolvedMore[id];
    } else {
      delete resolvedIdentities[id];
      delete resolvedMore[id];
      resolved = resolved.filter((r) => r !== id);
    }
    const under = activeUnder(id);
    if (!under.some((known) => !another(id, known, record))) setActive(id, [...under, record]);
  }
  return {
    active,
    ...(Object.keys(activeMore).length > 0 ? { activeMore } : {}),
    resolved,
    resolvedIdentities,
    ...(Object.keys(resolvedMore).length > 0 ? { resolvedMore } : {}),
  };
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

/** Each lh-error-poll node's memory (by watchKey), in its instrument's home: it outlives a redeploy of the node. */
const WATCHES = slot('seen-errors', () => new Map<string, WatchState>());

export function watchKey(instrumentKey: string, nodeId: string): string {
  return `${instrumentKey}|${nodeId}`;
}

export function newWatch(): WatchState {
  return { sources: { A: new SeenErrors(), B: new SeenErrors() }, channels: new Map(), connection: 'unknown', restored: false };
}

/** The memory of the lh-error-poll node `nodeId` of the instrument `instrumentKey` (its lh-server's), made on first use. */
export function watchFor(instrumentKey: string, nodeId: string): WatchState {
  const watches = homeOf(instrumentKey).slot(WATCHES);
  const key = watchKey(instrumentKey, nodeId);
  let watch = watches.get(key);
  if (!watch) {
    watch = newWatch();
    watches.set(key, watch);
  }
  return watch;
}

/** A removed node's memory is dropped (its id will not come back). */
export function forgetWatch(instrumentKey: string, nodeId: string): void {
  findHome(instrumentKey)?.slot(WATCHES).delete(watchKey(instrumentKey, nodeId));
}
