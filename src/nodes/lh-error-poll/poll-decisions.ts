/**
 * What a poll's results mean, decided without timers, I/O or Node-RED: which errors are raised and resolved,
 * what the status shows, what to log and when to poll next. Whether the instrument went offline or came back is the
 * lh-server's shared connection state (shared/connection-state.ts), which every request feeds; a poll reads from it
 * only how many requests in a row went unanswered (its back-off). The node (lh-error-poll.ts) fetches, calls
 * applyPoll() and carries out the outcome; pushed events (an error raised or resolved on a socket) go through
 * applyPush() under the same exactly-once memory.
 */
import { isUnreachable, type LhError } from '../../client';
import { backoffMs, desyncMs, withJitter } from '../shared/poll-loop';
import { SeenErrors, type Source, type WatchState } from './seen-errors';

export { DEFAULT_OFFLINE_AFTER, offlineAfterOf } from '../shared/connection-state';

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

/** The status line: the node turns it into texts (offline is the server's, shown by shared/status.ts). */
export type StatusDecision =
  { kind: 'refused'; error: LhError } | { kind: 'unreachable'; error: LhError } | { kind: 'pending'; count: number };

export interface PollOutcome<T> {
  raised: Sourced<T>[];
  resolved: Sourced<T>[];
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

/** What the status shows: a refusal first, then a failed poll, else the pending count. */
export function statusAfter(c: Pick<Classified<unknown>, 'unreachable' | 'refused'>, pending: number): StatusDecision {
  if (c.refused.length > 0) return { kind: 'refused', error: c.refused[0] };
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

/** What the server's connection state says when a poll ends (shared/connection-state.ts, this node's view). */
export interface SharedConnection {
  /** requests in a row that went unanswered (this poll's included) */
  failures: number;
  /** the node's own threshold: it backs off from there on */
  offlineAfter: number;
}

/**
 * Applies one poll to the instrument memory `watch` and the node's `memory` (both updated in place: they are the
 * only state, and nothing else is touched) and returns everything the node must do; `shared` sets the back-off.
 */
export function applyPoll<T>(
  watch: WatchState,
  memory: PollMemory,
  results: SourceResult<T>[],
  rules: PollRules<T>,
  shared: SharedConnection = { failures: 0, offlineAfter: rules.offlineAfter },
  random: () => number = Math.random,
): PollOutcome<T> {
  const c = classifyPollResults(results);
  const raised: Sourced<T>[] = [];
  const resolved: Sourced<T>[] = [];
  for (const { source, records } of c.listed) {
    // errors an adoption before this poll put out of place (adoptListed: a pushed error the list shows under the id
    // of another error still active here, which the instrument therefore reused): over, reported once
    for (const record of watch.sources[source].takeDisplaced()) resolved.push({ source, record: record as T });
    const diff = watch.sources[source].update(
      records,
      (record) => rules.keyOf(source, record),
      (record) => rules.wanted(record),
    );
    for (const record of diff.raised) raised.push({ source, record });
    for (const record of diff.resolved) resolved.push({ source, record });
  }

  memory.refusedPolls = c.refused.length > 0 ? memory.refusedPolls + 1 : 0;
  const pending = c.listed.reduce((n, l) => n + watch.sources[l.source].size, 0);
  const status = statusAfter(c, pending);
  const problem = status.kind === 'refused' ? status.error.message : status.kind === 'pending' ? '' : memory.lastProblem;
  const warn = problem !== '' && problem !== memory.lastProblem ? problem : undefined;
  memory.lastProblem = problem;

  const firstPoll = !memory.desynced;
  const delayMs = nextDelay(rules.baseMs, memory.refusedPolls, shared.failures, shared.offlineAfter, firstPoll, random);
  if (memory.refusedPolls === 0 && delayMs <= rules.baseMs) memory.desynced = true;

  return { raised, resolved, status, warn, changed: raised.length > 0 || resolved.length > 0, delayMs };
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
export function applyPush<T>(
  watch: WatchState,
  push: Push<T>,
  rules: Pick<PollRules<T>, 'keyOf' | 'wanted'>,
): Pick<PollOutcome<T>, 'raised' | 'resolved' | 'changed'> {
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

/** What a source lists that is still pending: records that are objects and not marked handled. */
export function pendingOnly<T>(list: unknown[]): T[] {
  return list.filter((e) => !!e && typeof e === 'object' && (e as { handled?: unknown }).handled !== true) as T[];
}
