/**
 * What a poll's results mean, decided without timers, I/O or Node-RED: which errors are raised and resolved,
 * whether the instrument went offline or came back, what the status shows, what to log and when to poll next.
 * The node (lh-error-poll.ts) fetches, calls applyPoll() and carries out the outcome; pushed events (an error
 * raised or resolved on a socket) go through applyPush() under the same exactly-once memory.
 */
import { isUnreachable, LhError } from '../../client';
import { backoffMs, desyncMs, withJitter } from '../shared/poll-loop';
import { ConnectionState, SeenErrors, Source, WatchState } from './seen-errors';

export const DEFAULT_OFFLINE_AFTER = 3;

/** What one source answered in one poll: its listed errors, or why it did not answer. */
export type SourceResult<T> = { source: Source; records: T[] } | { source: Source; error: LhError };

/** The rules of one poll node, from its configuration. */
export interface PollRules<T> {
  /** The poll interval in ms. */
  baseMs: number;
  /** Unreachable polls in a row before the instrument counts as offline. */
  offlineAfter: number;
  /** The error's identity within its source (A: id, B: uuid); records without one are ignored. */
  keyOf(source: Source, record: T): string | undefined;
  /** Whether an error may be reported (the severity filter). */
  wanted(record: T): boolean;
}

/** What one deployed node (not its instrument memory, which outlives a redeploy) remembers between polls. */
export interface PollMemory {
  /** polls in a row whose answer was a refusal (e.g. a rejected login) */
  refusedPolls: number;
  /** the last problem logged, so the same one is not logged at every poll */
  lastProblem: string;
  /** whether the one-off phase shift after a deploy was taken */
  desynced: boolean;
}

export function newPollMemory(): PollMemory {
  return { refusedPolls: 0, lastProblem: '', desynced: false };
}

export interface Sourced<T> {
  source: Source;
  record: T;
}

export interface ConnectionChange {
  state: 'online' | 'offline';
  failedPolls: number;
  reason?: string;
  interfaces?: Source[];
}

/** The status line: the node turns it into texts. */
export type StatusDecision =
  | { kind: 'refused'; error: LhError }
  | { kind: 'offline' }
  | { kind: 'unreachable'; error: LhError }
  | { kind: 'pending'; count: number };

export interface PollOutcome<T> {
  raised: Sourced<T>[];
  resolved: Sourced<T>[];
  /** The instrument went offline or came back (reported once per change). */
  connection?: ConnectionChange;
  status: StatusDecision;
  /** A problem to log; set only when it differs from the last one logged. */
  warn?: string;
  /** Whether the memory of errors changed (save it when persisting). */
  changed: boolean;
  /** Delay from this poll's start to the next poll, in ms. */
  delayMs: number;
}

export interface Classified<T> {
  listed: { source: Source; records: T[] }[];
  unreachable: { source: Source; error: LhError }[];
  refused: LhError[];
}

/** Splits a poll's results into answers, sources that did not answer, and refusals. */
export function classifyPollResults<T>(results: SourceResult<T>[]): Classified<T> {
  const out: Classified<T> = { listed: [], unreachable: [], refused: [] };
  for (const r of results) {
    if ('records' in r) out.listed.push(r);
    else if (isUnreachable(r.error)) out.unreachable.push({ source: r.source, error: r.error });
    else out.refused.push(r.error);
  }
  return out;
}

export interface ConnectionTrack {
  connection: ConnectionState;
  unreachablePolls: number;
}

/**
 * The connection after a poll: unreachable polls count up and, at `offlineAfter`, report offline once; a poll
 * where every source answered reports online once after offline. A refusal is an answer but not "online" news.
 */
export function nextConnection(
  track: ConnectionTrack,
  c: Pick<Classified<unknown>, 'unreachable' | 'refused'>,
  offlineAfter: number,
): { track: ConnectionTrack; change?: ConnectionChange } {
  if (c.unreachable.length > 0) {
    const unreachablePolls = track.unreachablePolls + 1;
    if (unreachablePolls >= offlineAfter && track.connection !== 'offline') {
      return {
        track: { connection: 'offline', unreachablePolls },
        change: {
          state: 'offline',
          failedPolls: unreachablePolls,
          reason: c.unreachable[0].error.message,
          interfaces: c.unreachable.map((u) => u.source),
        },
      };
    }
    return { track: { connection: track.connection, unreachablePolls } };
  }
  if (c.refused.length > 0) return { track };
  const change: ConnectionChange | undefined =
    track.connection === 'offline' ? { state: 'online', failedPolls: track.unreachablePolls } : undefined;
  return { track: { connection: 'online', unreachablePolls: 0 }, change };
}

/** What the status shows: a refusal first, then offline, then a failed poll, else the pending count. */
export function statusAfter(c: Pick<Classified<unknown>, 'unreachable' | 'refused'>, connection: ConnectionState, pending: number): StatusDecision {
  if (c.refused.length > 0) return { kind: 'refused', error: c.refused[0] };
  if (connection === 'offline') return { kind: 'offline' };
  if (c.unreachable.length > 0) return { kind: 'unreachable', error: c.unreachable[0].error };
  return { kind: 'pending', count: pending };
}

/**
 * The delay to the next poll: back-off (with jitter) while a login is refused or once offline; the interval
 * otherwise, shortened once after a deploy so that nodes started together spread out (jitter on every poll
 * would add to the detection latency).
 */
export function nextDelay(
  baseMs: number,
  refusedPolls: number,
  unreachablePolls: number,
  offlineAfter: number,
  firstPoll: boolean,
  random: () => number = Math.random,
): number {
  if (refusedPolls > 0) return withJitter(backoffMs(baseMs, refusedPolls, 0), random);
  const delay = backoffMs(baseMs, unreachablePolls, offlineAfter);
  if (delay > baseMs) return withJitter(delay, random);
  return firstPoll ? desyncMs(baseMs, random) : baseMs;
}

/**
 * Applies one poll to the instrument memory `watch` and the node's `memory` (both updated in place: they are the
 * only state, and nothing else is touched) and returns everything the node must do.
 */
export function applyPoll<T>(
  watch: WatchState,
  memory: PollMemory,
  results: SourceResult<T>[],
  rules: PollRules<T>,
  random: () => number = Math.random,
): PollOutcome<T> {
  const c = classifyPollResults(results);
  const raised: Sourced<T>[] = [];
  const resolved: Sourced<T>[] = [];
  for (const { source, records } of c.listed) {
    const diff = watch.sources[source].update(
      records,
      (record) => rules.keyOf(source, record),
      (record) => rules.wanted(record),
    );
    for (const record of diff.raised) raised.push({ source, record });
    for (const record of diff.resolved) resolved.push({ source, record });
  }

  const { track, change } = nextConnection(watch, c, rules.offlineAfter);
  watch.connection = track.connection;
  watch.unreachablePolls = track.unreachablePolls;

  memory.refusedPolls = c.refused.length > 0 ? memory.refusedPolls + 1 : 0;
  const pending = c.listed.reduce((n, l) => n + watch.sources[l.source].size, 0);
  const status = statusAfter(c, watch.connection, pending);
  const problem = status.kind === 'refused' ? status.error.message : status.kind === 'pending' ? '' : memory.lastProblem;
  const warn = problem !== '' && problem !== memory.lastProblem ? problem : undefined;
  memory.lastProblem = problem;

  const firstPoll = !memory.desynced;
  const delayMs = nextDelay(rules.baseMs, memory.refusedPolls, watch.unreachablePolls, rules.offlineAfter, firstPoll, random);
  if (memory.refusedPolls === 0 && delayMs <= rules.baseMs) memory.desynced = true;

  return { raised, resolved, connection: change, status, warn, changed: raised.length > 0 || resolved.length > 0, delayMs };
}

/** A change pushed by the instrument (a websocket frame), for one source or for a push-only channel. */
export interface Push<T> {
  /** The source the errors belong to (their message contract: A ids, B uuids). */
  source: Source;
  /**
   * Omitted when the poll lists these errors too: they share that source's memory, so the poll neither raises
   * them again nor misses their resolution. Named for errors that exist only on a socket: a memory of their own,
   * which polls never touch (only a push resolves them).
   */
  channel?: string;
  raised?: T[];
  /** Keys (A: id, B: uuid) of errors the push says are gone. */
  resolved?: string[];
}

/** Applies one push to `watch` under the exactly-once rules of the polls; returns what to emit. */
export function applyPush<T>(watch: WatchState, push: Push<T>, rules: Pick<PollRules<T>, 'keyOf' | 'wanted'>): Pick<PollOutcome<T>, 'raised' | 'resolved' | 'changed'> {
  const memory = memoryFor(watch, push.source, push.channel);
  const raised: Sourced<T>[] = [];
  const resolved: Sourced<T>[] = [];
  for (const record of push.raised ?? []) {
    const key = rules.keyOf(push.source, record);
    if (key !== undefined && memory.raise(key, record, rules.wanted(record))) raised.push({ source: push.source, record });
  }
  for (const record of memory.takeDisplaced()) resolved.push({ source: push.source, record: record as T });
  for (const key of push.resolved ?? []) {
    const record = memory.resolve(key) as T | undefined;
    if (record !== undefined) resolved.push({ source: push.source, record });
  }
  return { raised, resolved, changed: raised.length > 0 || resolved.length > 0 };
}

function memoryFor(watch: WatchState, source: Source, channel: string | undefined): SeenErrors {
  if (channel === undefined) return watch.sources[source];
  let memory = watch.channels.get(channel);
  if (!memory) watch.channels.set(channel, (memory = new SeenErrors()));
  return memory;
}

/** The configured sources: 'A' (default), 'B' or 'both'. */
export function sourcesOf(choice: unknown): Source[] {
  if (choice === 'B') return ['B'];
  if (choice === 'both') return ['A', 'B'];
  return ['A'];
}

/** The configured number of unreachable polls before offline: an integer >= 1, else the default 3. */
export function offlineAfterOf(value: unknown): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_OFFLINE_AFTER;
}

/** What a source lists that is still pending: records that are objects and not marked handled. */
export function pendingOnly<T>(list: unknown[]): T[] {
  return list.filter((e) => !!e && typeof e === 'object' && (e as { handled?: unknown }).handled !== true) as T[];
}
