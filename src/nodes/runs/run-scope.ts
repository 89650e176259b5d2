import { EventEmitter } from 'events';

import { steadyNow, urlKey } from '../../client';
import { findHome, homeOf, slot } from '../../instrument';
import { severityRank } from '../answering/severity';
import type { ErrorSource } from '../shared/poll-messages';

/** The rank of Fatal (and Critical) among the severities (answering/severity.ts). */
const FATAL_RANK = 3;

/**
 * What "in this run" means to the error policy: recurrence counts for recovery ladders, and the run-scoped rules a
 * person chose on the answer page ("the same for similar errors until this run ends"). Pure: no timers, no I/O, no
 * Node-RED; time is passed in.
 *
 * A scope is the run the policy knows of (from lh-run-watch's messages: a state other than Idle starts or continues
 * a run, Idle or a finished run ends it), or, while no run is active, the clock hour. Counts restart whenever the
 * scope changes: a new run starts at the first step again.
 *
 * Its time is the steady clock's (`steadyNow`, the wall clock as it read at start moving monotonically), as is the
 * time a run-scoped rule was chosen at (`addRunRule`): an NTP step or a resumed VM neither starts a new hour early
 * (a step forward would put the ladders back to their first, automatic steps) nor holds one for the step's length
 * (a step back; a clock jittering back across the hour would restart them twice), and a person's choice made after a
 * step back is never taken for one made before the run began.
 */

/** How a run-watch message names the run: the instrument's start time, else the protocol and when it was seen. */
export interface RunSighting {
  /**
   * stable for the whole run; for an end: the run that ended (a finished message), or '' when the instrument is
   * back to Idle (whatever run it had is over)
   */
  key: string;
  /** 'active': the run goes on; 'ended': it is over (Idle, or the finished message) */
  phase: 'active' | 'ended';
  /** the instrument the run-watch msg names (`msg.instrument`), when it names one */
  instrument?: { baseUrl: string; instrumentUrl: string };
}

const HOUR_MS = 3600_000;
/** errors remembered per rule and scope (an error raised again keeps its step) */
const MAX_ERRORS_PER_RULE = 1000;
/** rules whose counts are kept per scope */
const MAX_LADDERS = 200;

interface Ladder {
  next: number;
  /** error (key and identity) → the occurrence it was given */
  seen: Map<string, number>;
}

export interface ScopeInfo {
  kind: 'run' | 'hour';
  /** the run's key, or the hour's start (ISO) */
  key: string;
  /** when this scope began for the policy (ms): run-scoped rules made before it are over */
  since: number;
}

/**
 * The steady and the wall clock read at one moment. A steady time means nothing to another process (a restart: the
 * steady clock starts again from the wall clock, and moves apart from it with every step and suspend of the old
 * process): a snapshot carries the pair it was taken at, and is read through it, by the wall clock both share.
 */
export interface ClockPair {
  steady: number;
  wall: number;
}

export interface RunScopeSnapshot {
  run?: { key: string; since: number };
  lastRunEnd?: number;
  scope?: string;
  ladders: [string, { next: number; seen: [string, number][] }][];
  /** both clocks when it was taken; none: its times are the wall clock's (written before 0.4) */
  clock?: ClockPair;
}

/** A time a date can be made of (finite, within ±8.64e15 ms of 1970): NaN or `1e300` in a saved snapshot is none. */
function isTime(t: unknown): t is number {
  return typeof t === 'number' && Number.isFinite(t) && Math.abs(t) <= 8.64e15;
}

/** The scope name of the clock hour `t` is in; undefined when it has no date. */
function hourName(t: number): string | undefined {
  const start = Math.floor(t / HOUR_MS) * HOUR_MS;
  return isTime(start) ? `hour:${new Date(start).toISOString()}` : undefined;
}

export class RunScope {
  private run?: { key: string; since: number };
  private lastRunEnd = 0;
  private scopeKey?: string;
  private ladders = new Map<string, Ladder>();

  /** The scope at `now`: the run, else the clock hour (which begins no earlier than the last run's end). */
  current(now: number): ScopeInfo {
    // never after now: a scope begun at a later reading (saved before a restart on a clock since set back) leaves a
    // choice made now in force
    if (this.run) return { kind: 'run', key: this.run.key, since: Math.min(now, this.run.since) };
    const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
    return { kind: 'hour', key: new Date(hourStart).toISOString(), since: Math.min(now, Math.max(hourStart, this.lastRunEnd)) };
  }

  /** A run-watch message's news. Returns true when the scope changed (a run started, another replaced it, or it ended). */
  sighting(s: RunSighting, now: number): boolean {
    if (s.phase === 'active') {
      if (this.run?.key === s.key) return false;
      // the run's start time appeared (first seen Loading, without one): the same run
      if (this.run && this.run.key.endsWith('|') && s.key.startsWith(this.run.key)) {
        this.run.key = s.key;
        this.scopeKey = scopeId(this.current(now));
        return false;
      }
      if (this.run) this.lastRunEnd = now;
      this.run = { key: s.key, since: now };
      this.reset(now);
      return true;
    }
    if (!this.run) return false;
    // a finished message of an earlier run (the next run started between two polls, Idle missed) ends nothing
    if (s.key !== '' && !sameRun(this.run.key, s.key)) return false;
    this.run = undefined;
    this.lastRunEnd = now;
    this.reset(now);
    return true;
  }

  /**
   * The occurrence (0 = first) of error `errorId` among the errors matching rule `rule` in the current scope. The same
   * error raised again keeps its occurrence; a new error takes the next one.
   */
  occurrence(rule: string, errorId: string, now: number): number {
    this.follow(now);
    let ladder = this.ladders.get(rule);
    if (!ladder) {
      if (this.ladders.size >= MAX_LADDERS) this.ladders.delete(this.ladders.keys().next().value as string);
      this.ladders.set(rule, (ladder = { next: 0, seen: new Map() }));
    }
    const known = ladder.seen.get(errorId);
    if (known !== undefined) return known;
    const n = ladder.next++;
    ladder.seen.set(errorId, n);
    if (ladder.seen.size > MAX_ERRORS_PER_RULE) ladder.seen.delete(ladder.seen.keys().next().value as string);
    return n;
  }

  /** The occurrence `occurrence()` would give, without recording it. */
  peek(rule: string, errorId: string, now: number): number {
    this.follow(now);
    const ladder = this.ladders.get(rule);
    return ladder?.seen.get(errorId) ?? ladder?.next ?? 0;
  }

  /** Counts kept under `from` (a key of an older version) are kept under `to` from now on, unless `to` has its own. */
  adopt(from: string, to: string): void {
    const ladder = this.ladders.get(from);
    if (!ladder || from === to) return;
    this.ladders.delete(from);
    if (!this.ladders.has(to)) this.ladders.set(to, ladder);
  }

  /** How many new matching errors each rule has seen in the current scope. */
  counts(now: number): Record<string, number> {
    this.follow(now);
    return Object.fromEntries([...this.ladders].map(([rule, l]) => [rule, l.next]));
  }

  /** `clock`: both clocks now (what lets another process read the times, see restore). */
  snapshot(clock?: ClockPair): RunScopeSnapshot {
    return {
      ...(this.run ? { run: { ...this.run } } : {}),
      lastRunEnd: this.lastRunEnd,
      ...(this.scopeKey ? { scope: this.scopeKey } : {}),
      ladders: [...this.ladders].map(([rule, l]) => [rule, { next: l.next, seen: [...l.seen] }]),
      ...(clock ? { clock: { ...clock } } : {}),
    };
  }

  /**
   * A saved snapshot (a restart of Node-RED in the middle of a run keeps the run's counts). `clock`: both clocks now,
   * in this process; the snapshot's times are read on this process's steady clock through the wall clock (never
   * after now): taken as they were, a run begun "later" than this process's now (the old process's steady clock ran
   * ahead of the wall clock, which was set back) had every choice "the same for similar errors" made since the restart
   * taken for one made before the run (dropped at the next error), and an hour read on the old steady clock restarted
   * the ladders within the same hour, or kept them into the next.
   */
  restore(saved: unknown, clock?: ClockPair): void {
    if (!saved || typeof saved !== 'object') return;
    const s = saved as Partial<RunScopeSnapshot>;
    // a pair a date can be made of (a file edited or damaged: `1e300` made the hour's name throw, and no policy of
    // the instrument started); else its times are read as the wall clock's, as a snapshot written before 0.4
    const then = s.clock && isTime(s.clock.steady) && isTime(s.clock.wall) ? s.clock : undefined;
    const here = (t: number): number =>
      clock ? Math.min(clock.steady, t - (then ? then.steady - then.wall : 0) + (clock.steady - clock.wall)) : t;
    if (s.run && typeof s.run.key === 'string' && isTime(s.run.since)) this.run = { key: s.run.key, since: here(s.run.since) };
    if (isTime(s.lastRunEnd)) this.lastRunEnd = here(s.lastRunEnd);
    if (typeof s.scope === 'string') this.scopeKey = s.scope;
    // the hour the counts were kept for, when it was the hour at the save: the hour of the save on this steady clock
    const moved = clock && then ? hourName(here(then.steady)) : undefined;
    if (moved !== undefined && then && s.scope === hourName(then.steady)) this.scopeKey = moved;
    if (!Array.isArray(s.ladders)) return;
    this.ladders.clear();
    for (const entry of s.ladders.slice(0, MAX_LADDERS)) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !entry[1] || typeof entry[1].next !== 'number') continue;
      const seen = Array.isArray(entry[1].seen)
        ? entry[1].seen.filter((p) => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'number')
        : [];
      this.ladders.set(entry[0], { next: entry[1].next, seen: new Map(seen.slice(-MAX_ERRORS_PER_RULE)) });
    }
  }

  /** Counts restart when the scope is another one than the one they were kept for (a new hour, a new run). */
  private follow(now: number): void {
    const key = scopeId(this.current(now));
    if (key !== this.scopeKey) {
      this.scopeKey = key;
      this.restartCounts();
    }
  }

  private reset(now: number): void {
    this.restartCounts();
    this.scopeKey = scopeId(this.current(now));
  }

  /**
   * A new scope: every ladder starts at its first step again. The errors decided before stay known with the step they
   * got: one raised again (still pending after its run ended, or past the hour) keeps its step and takes none of the
   * new scope's.
   */
  private restartCounts(): void {
    for (const ladder of this.ladders.values()) ladder.next = 0;
  }
}

function scopeId(s: ScopeInfo): string {
  return `${s.kind}:${s.key}`;
}

/**
 * Whether a finished message's run (`ended`) is the run in scope (`current`): the same protocol and start time; a run
 * whose start time is not known yet (`protocol|`) is the one of that protocol.
 */
function sameRun(current: string, ended: string): boolean {
  if (current === ended) return true;
  return current.endsWith('|') && ended.startsWith(current);
}

/** The run key a run-watch msg's payload names: its protocol and the instrument's start time. */
function runKeyOf(payload: Record<string, unknown>): string {
  const start = typeof payload.startTime === 'string' && !payload.startTime.startsWith('0001-') ? payload.startTime : '';
  const protocol = payload.protocolId ?? payload.protocolName ?? '';
  return `${String(protocol)}|${start}`;
}

/**
 * The instrument a msg names (`msg.instrument`: its public URLs, as lh-run-watch and lh-error-poll set it), when it
 * names one.
 */
export function instrumentOf(msg: Record<string, unknown>): RunSighting['instrument'] {
  const i = msg.instrument;
  if (!i || typeof i !== 'object') return undefined;
  const { baseUrl, instrumentUrl } = i as Record<string, unknown>;
  if (typeof baseUrl !== 'string' || baseUrl === '') return undefined;
  return { baseUrl, instrumentUrl: typeof instrumentUrl === 'string' ? instrumentUrl : '' };
}

/**
 * A URL for comparison: the instrument's identity as its home knows it (`urlKey`: letter case, loopback aliases, a
 * default port and trailing slashes make no difference), so a run watch on another lh-server node of the same
 * instrument, its URL spelled otherwise, is this instrument's.
 */
function comparableUrl(url: string): string {
  return urlKey(url);
}

/**
 * Whether a run-watch msg (or an error of lh-error-poll) is about the policy's own instrument (`own`: its lh-server's
 * public URLs). A msg that names no instrument (written by hand, or by a function node) is taken as the policy's own;
 * one that names another instrument's interface A (or, when both name one, another interface B) is not.
 */
export function isOwnRun(s: RunSighting, own: { baseUrl: string; instrumentUrl: string }): boolean {
  return isOwnInstrument(s.instrument, own);
}

/** Whether the instrument a msg names (none: taken as the policy's own) is the policy's own (see isOwnRun). */
export function isOwnInstrument(named: RunSighting['instrument'], own: { baseUrl: string; instrumentUrl: string }): boolean {
  if (!named) return true;
  if (comparableUrl(named.baseUrl) !== comparableUrl(own.baseUrl)) return false;
  const [theirs, mine] = [named.instrumentUrl, own.instrumentUrl];
  return theirs === '' || mine === '' || comparableUrl(theirs) === comparableUrl(mine);
}

/**
 * What a message of lh-run-watch says about the run, or undefined when it is not one: output 1 (`topic: 'state'`,
 * `payload` the run status) and output 2 (`topic: 'finished'`).
 */
export function runSighting(msg: Record<string, unknown>): RunSighting | undefined {
  if (msg.event !== undefined) return undefined; // an error (raised, resolved) is never a run's news
  const payload = msg.payload && typeof msg.payload === 'object' ? (msg.payload as Record<string, unknown>) : undefined;
  const instrument = instrumentOf(msg);
  const whose = instrument ? { instrument } : {};
  if (msg.topic === 'finished') {
    // the run that finished (its protocol and start); a finished msg naming no run ends the run in scope
    const named =
      payload && [payload.protocolId, payload.protocolName, payload.startTime].some((v) => v !== undefined && v !== null);
    const key = payload && named ? runKeyOf(payload) : '';
    return { key, phase: 'ended', ...whose };
  }
  if (msg.topic !== 'state' || !payload) return undefined;
  const state = msg.state ?? payload.protocolRunState;
  if (state === 'Idle' || state === 0) return { key: '', phase: 'ended', ...whose };
  if (typeof state !== 'string' && typeof state !== 'number') return undefined;
  return { key: runKeyOf(payload), phase: 'active', ...whose };
}

/** A choice made on the answer page: answer similar errors the same way until the run ends. */
export interface RunRule {
  source: ErrorSource;
  /**
   * what "similar" means: the error's code when it has one, else its title; and its severity (lower case, '' when
   * it gives none): a rule chosen on an Error never answers a Warning or a Fatal of the same code
   */
  match: { code?: string; title?: string; severity?: string };
  /** A: the response; B: the action id */
  answer: string;
  /** B: the input values given with the answer */
  inputs?: Record<string, string>;
  /** per-item answers (A) given with it */
  items?: Record<string, string>;
  by: string | null;
  /** when it was chosen (ms since the epoch, as a person reads it) */
  at: number;
  /** the error it was chosen on */
  errorKey: string;
  /** when it was chosen by the steady clock (set by addRunRule): what the scope's start is compared with */
  steadyAt: number;
}

const MAX_RUN_RULES = 50;
/** The run-scoped rules a person chose for an instrument (its home's slot), oldest first. */
const RUN_RULES = slot('run-rules', () => ({ list: [] as RunRule[] }));

/** Tells the policies of an instrument that a person chose a run-scoped rule: `(instrument)`. */
export const runRuleEvents = new EventEmitter();
runRuleEvents.setMaxListeners(0);

/** An error's severity as "similar" compares it: trimmed, lower case; '' when it gives none. */
function severityOf(record: Record<string, unknown>): string {
  return typeof record.severity === 'string' ? record.severity.trim().toLowerCase().slice(0, 100) : '';
}

/** What makes two errors similar: the same source, the same severity, and the same code (without a code, title). */
export function similarity(record: Record<string, unknown>): RunRule['match'] {
  const severity = severityOf(record);
  const code = record.code ?? record.errorCode;
  if (typeof code === 'string' || typeof code === 'number') return { code: String(code), severity };
  return { title: typeof record.title === 'string' ? record.title : '', severity };
}

/** A Fatal (or Critical) error: a person's run-scoped answer never answers one. */
export function isFatal(record: Record<string, unknown>): boolean {
  return severityRank(record.severity) === FATAL_RANK;
}

export function isSimilar(rule: RunRule, source: ErrorSource, record: Record<string, unknown>): boolean {
  if (rule.source !== source || isFatal(record)) return false;
  const m = similarity(record);
  if ((rule.match.severity ?? '') !== m.severity) return false;
  return rule.match.code !== undefined ? m.code === rule.match.code : m.code === undefined && m.title === rule.match.title;
}

function sameMatch(a: RunRule, b: RunRule): boolean {
  return (
    a.source === b.source &&
    a.match.code === b.match.code &&
    a.match.title === b.match.title &&
    (a.match.severity ?? '') === (b.match.severity ?? '')
  );
}

/** Records a run-scoped rule of an instrument (the answer page); the newest for the same kind of error wins. */
export function addRunRule(instrument: string, chosen: Omit<RunRule, 'steadyAt'>, now = steadyNow()): void {
  const rule: RunRule = { ...chosen, steadyAt: now };
  const rules = homeOf(instrument).slot(RUN_RULES);
  const list = rules.list.filter((r) => !sameMatch(r, rule));
  list.push(rule);
  if (list.length > MAX_RUN_RULES) list.shift();
  rules.list = list;
  runRuleEvents.emit('added', instrument);
}

/**
 * The run-scoped rules of an instrument still in force: made since `since` (the current scope's start, by the
 * steady clock).
 */
export function runRulesOf(instrument: string, since: number): RunRule[] {
  const home = findHome(instrument);
  if (!home?.has(RUN_RULES)) return [];
  const rules = home.slot(RUN_RULES);
  rules.list = rules.list.filter((r) => r.steadyAt >= since);
  return rules.list;
}

/** The run-scoped rule for an error, if any (the newest similar one). */
export function runRuleFor(
  instrument: string,
  since: number,
  source: ErrorSource,
  record: Record<string, unknown>,
): RunRule | undefined {
  const list = runRulesOf(instrument, since);
  for (let i = list.length - 1; i >= 0; i--) if (isSimilar(list[i], source, record)) return list[i];
  return undefined;
}

/** The error policies deployed for an instrument (its home's slot): the answer page offers a run-scoped answer only where one applies it. */
const POLICIES = slot('run-rule-policies', () => new Set<string>());

/** A policy node applies run-scoped rules for `instrument`; returns the function that withdraws it (on close). */
export function policyApplies(instrument: string, nodeId: string): () => void {
  const set = homeOf(instrument).slot(POLICIES);
  set.add(nodeId);
  return () => void set.delete(nodeId);
}

export function hasPolicy(instrument: string): boolean {
  const home = findHome(instrument);
  return home?.has(POLICIES) === true && home.slot(POLICIES).size > 0;
}
