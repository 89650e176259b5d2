/**
 * What a run status means for lh-run-watch: a state change, a finished run and its result, the progress and
 * its ETA. Pure: no timers, no I/O, no Node-RED. The memory it updates lives at module level in run-memory.ts,
 * so a redeploy does not report a state or a finished run twice.
 */
import {
  instrumentDate,
  type MappedRunResult,
  mapRunResult,
  newRecords,
  recordStartMs,
  type RunOutcome,
  type RunStateName,
  type RunStatus,
} from '../../client';

/** A finished run's result as lh-run-watch reports it (`unknown`: the instrument's words are not known ones). */
export type RunResult = RunOutcome;

/** The run being watched, from its first sight until it is back to Idle. */
export interface TrackedRun {
  protocolId: number | null;
  protocolName: string | null;
  /** the instrument's start time (ISO), once it gives one */
  startTime: string | null;
  /** when the watch first saw the run (ms) */
  firstSeenAt: number;
  /** every state seen during the run, in order, without repeats */
  states: RunStateName[];
  /**
   * the ids of the run records the instrument listed when the watch first saw this run (none of them is its
   * record); undefined: not read yet; null: the list could not be read
   */
  priorRecordIds?: string[] | null;
  /**
   * the run no longer went on when the status was read again after that list (a run first seen in its last moments):
   * its own record may be in the list, known then by the run's start time only
   */
  priorRecordsUnsure?: boolean;
}

export interface RunMemory {
  /** the last state reported on output 1 (undefined: nothing reported yet) */
  state?: RunStateName;
  run?: TrackedRun;
  /** keys of runs already reported as finished (bounded) */
  finished: string[];
  /** when progress was last reported (ms) */
  progressAt?: number;
}

export interface StateChange {
  state: RunStateName;
  previousState: RunStateName | null;
}

/** A run that ended: reported once on output 2 (the record id and result are filled in from run-data when found). */
export interface FinishedRun {
  key: string;
  run: TrackedRun;
  /** when the watch saw the run end (ms) */
  endedAt: number;
}

export interface Observation {
  change?: StateChange;
  finished?: FinishedRun;
}

export const FINISHED_MEMORY = 200;

export function newMemory(): RunMemory {
  return { finished: [] };
}

/**
 * A copy of the memory's run part to decide a poll on: the memory itself (kept across redeploys) changes only when
 * the poll's msgs go out (`commitMemory`), so a poll whose node was closed while it waited (the finished run's record
 * read) leaves it as it was, and the redeployed node reports what that poll would have.
 */
export function draftMemory(memory: RunMemory): RunMemory {
  const draft: RunMemory = { finished: [...memory.finished] };
  if (memory.state !== undefined) draft.state = memory.state;
  if (memory.run !== undefined) draft.run = { ...memory.run, states: [...memory.run.states] };
  if (memory.progressAt !== undefined) draft.progressAt = memory.progressAt;
  return draft;
}

/** Writes a decided draft's run part into the memory (its other fields, e.g. the connection state, stay). */
export function commitMemory(memory: RunMemory, draft: RunMemory): void {
  memory.state = draft.state;
  memory.run = draft.run;
  memory.finished = draft.finished;
  memory.progressAt = draft.progressAt;
}

export function runKey(run: TrackedRun): string {
  return `${run.protocolId ?? ''}|${run.protocolName ?? ''}|${run.startTime ?? `seen:${run.firstSeenAt}`}`;
}

/** Compares one status with what was reported; updates the memory and says what to emit. */
export function observe(memory: RunMemory, status: RunStatus, now: number): Observation {
  const out: Observation = {};
  const state = status.protocolRunState;
  if (memory.state !== state) {
    out.change = { state, previousState: memory.state ?? null };
    memory.state = state;
  }
  const active = state !== 'Idle';
  const tracked = memory.run;
  if (tracked && active && replaced(tracked, status)) out.finished = finish(memory, tracked, now);
  if (active) {
    if (!memory.run) {
      memory.run = {
        protocolId: status.protocolId,
        protocolName: status.protocolName,
        startTime: status.startTime,
        firstSeenAt: now,
        states: [],
      };
    }
    const run = memory.run;
    run.startTime ??= status.startTime;
    run.protocolId ??= status.protocolId;
    run.protocolName ??= status.protocolName;
    if (run.states[run.states.length - 1] !== state) run.states.push(state);
  } else if (tracked && !out.finished) {
    out.finished = finish(memory, tracked, now);
  }
  return out;
}

/** States a run reaches only after its loading was confirmed: it never goes back to being prepared from them. */
const PAST_LOADING: readonly RunStateName[] = ['Running', 'Pausing', 'Paused', 'Aborting'];
/** States of a run being prepared (before load-complete). */
const BEING_PREPARED: readonly RunStateName[] = ['Scheduling', 'Scheduled', 'Loading'];

/**
 * Whether an active status shows another run than the tracked one (a run that replaced it between two polls, its Idle
 * missed): both have start times and they differ, or both name a protocol and they differ (a run's protocol does not
 * change while it runs; a run first seen at Loading has no start time yet), or the tracked run was seen running (or
 * aborting, or with a start time) and the status shows a run being prepared without one (Scheduling, Scheduled,
 * Loading: a run never goes back there; a reload mid-run is Reloading), or the tracked run was seen aborting without
 * a start time and the status has one (a run aborted while being prepared never starts). Without any of these, the
 * instrument's status names no run: the same run.
 */
function replaced(tracked: TrackedRun, status: RunStatus): boolean {
  const state = status.protocolRunState;
  if (tracked.startTime && status.startTime && tracked.startTime !== status.startTime) return true;
  // a run that was seen running (or with a start time) is never again being prepared; one aborted unstarted never starts
  const ran = tracked.startTime !== null || tracked.states.some((s) => PAST_LOADING.includes(s));
  if (ran && BEING_PREPARED.includes(state) && !status.startTime) return true;
  if (tracked.states.includes('Aborting') && !tracked.startTime && status.startTime) return true;
  return tracked.protocolId !== null && status.protocolId !== null && tracked.protocolId !== status.protocolId;
}

function finish(memory: RunMemory, run: TrackedRun, now: number): FinishedRun | undefined {
  memory.run = undefined;
  const key = runKey(run);
  if (memory.finished.includes(key)) return undefined;
  memory.finished.push(key);
  if (memory.finished.length > FINISHED_MEMORY) memory.finished.shift();
  return { key, run, endedAt: now };
}

/**
 * The result of a finished run. The instrument's run record says it when found, mapped by whole known words only
 * (mapRunResult): a word that is not known is `unknown` with the instrument's text, never `completed`. Without a
 * record, only what the watch saw the instrument do counts: an abort after an error handling is a failure, an abort
 * alone an abort; a run seen ending without an abort is `unknown` (the watch cannot tell a completed run from one
 * aborted between two polls).
 */
export function resultOf(
  record: { runResult?: unknown; [field: string]: unknown } | undefined,
  states: RunStateName[],
): MappedRunResult {
  if (record) return mapRunResult(record.runResult);
  const aborting = states.indexOf('Aborting');
  if (aborting < 0) return { result: 'unknown', resultText: null };
  return { result: states.slice(0, aborting).includes('ErrorHandling') ? 'failed' : 'aborted', resultText: null };
}

export interface RunRecordLike {
  id: string;
  protocolName?: unknown;
  startTime?: unknown;
  [field: string]: unknown;
}

/** How far after the status's start the record's start may be (the two clocks round differently). */
const START_TOLERANCE_MS = 5000;
/**
 * How far before it: a rounding only. A record starting earlier than the run is an older run's, and is never taken
 * (a run aborted at once and started again within seconds must not get the first one's record).
 */
const START_ROUNDING_MS = 1000;

/** An instrument date (ISO, or zone-less: the instrument's UTC) as ms; NaN when none. */
function instrumentMs(value: unknown): number {
  const iso = instrumentDate(value);
  return iso === null ? NaN : Date.parse(iso);
}

/**
 * The run record of a finished run. Only a record the instrument did not list when the watch first saw the run
 * counts: the one whose start is the run's own start time, when the status gave one, else the oldest of them (runs
 * follow one another: the watched run ended before any later run began, so its record, when it left one, is the
 * first written since; the newest may be a later run's, one that came and went between two polls). Without that
 * list, only a record whose start is the run's start time as the instrument gave it (both on the instrument's clock)
 * counts. Never a time window against this Node-RED's clock: the instrument's clock and zone are its own.
 */
export function matchRecord(records: RunRecordLike[], run: TrackedRun): RunRecordLike | undefined {
  const started = run.startTime ? instrumentMs(run.startTime) : NaN;
  const sameStart = (r: RunRecordLike): boolean =>
    !Number.isNaN(started) &&
    recordStartMs(r) - started >= -START_ROUNDING_MS &&
    recordStartMs(r) - started <= START_TOLERANCE_MS;
  const ofProtocol = (r: RunRecordLike): boolean =>
    !run.protocolName || typeof r.protocolName !== 'string' || r.protocolName === run.protocolName;
  // of the records starting at the run's start time, the nearest: a run started again within seconds of this one's
  // start (this one aborted at once) has its record start within the tolerance too, and must not win by list order
  const nearest = (candidates: RunRecordLike[]): RunRecordLike | undefined => {
    let best: RunRecordLike | undefined;
    for (const r of candidates) {
      if (!sameStart(r)) continue;
      if (!best || Math.abs(recordStartMs(r) - started) < Math.abs(recordStartMs(best) - started)) best = r;
    }
    return best;
  };
  // the run may have ended before the list was read (unsure): its own record may be a listed one, and every new one
  // may be a later run's, so it is known by its start time only, listed or new
  if (Array.isArray(run.priorRecordIds) && run.priorRecordsUnsure !== true) {
    const fresh = newRecords(records, new Set(run.priorRecordIds), run.protocolName);
    // newest first, undated last: the oldest dated one, else the first undated
    const dated = fresh.filter((r) => !Number.isNaN(recordStartMs(r)));
    return nearest(fresh) ?? (dated.length > 0 ? dated[dated.length - 1] : fresh[0]);
  }
  return nearest(records.filter(ofProtocol));
}

/**
 * Whether `status`, read after the run records were listed at the run's first sight, shows the run still going on
 * (not Idle, not aborting, not another run): then it had not ended when the list was read, and none of the records
 * listed is its own. Otherwise the run may have ended in between (a run first seen in its last moments): its own
 * record may be among them (`priorRecordsUnsure`: a listed record then counts by the run's start time only).
 */
export function stillGoingOn(run: TrackedRun, status: RunStatus): boolean {
  const state = status.protocolRunState;
  return state !== 'Idle' && state !== 'Aborting' && !replaced(run, status);
}

/** ms from the run's start (the instrument's, else first sight) to its end. */
export function durationOf(run: TrackedRun, endedAt: number): number {
  const instrumentStart = run.startTime ? instrumentMs(run.startTime) : NaN;
  const start = Number.isNaN(instrumentStart) ? run.firstSeenAt : instrumentStart;
  return Math.max(0, endedAt - start);
}

export interface Progress {
  /** 0..1 */
  progress: number;
  /** the estimated end (ISO) */
  eta: string;
  /** ms left */
  remainingMs: number;
}

/** Progress from the start time and the estimated end; undefined without both or when no run is active. */
export function progressOf(status: RunStatus, now: number): Progress | undefined {
  if (status.protocolRunState === 'Idle' || !status.startTime || !status.estimatedEndTime) return undefined;
  const start = instrumentMs(status.startTime);
  const end = instrumentMs(status.estimatedEndTime);
  if (!(end > start)) return undefined;
  const progress = Math.min(1, Math.max(0, (now - start) / (end - start)));
  return { progress: Math.round(progress * 1000) / 1000, eta: status.estimatedEndTime, remainingMs: Math.max(0, end - now) };
}

/**
 * Whether to report progress now: at most once per `everyMs` (0: on every poll). A last report dated after now (the
 * wall clock set back since, or another replica's clock ahead of this one's) counts from now: the next report waits
 * at most `everyMs`, never the step's length.
 */
export function progressDue(memory: RunMemory, now: number, everyMs: number): boolean {
  const last = memory.progressAt === undefined ? undefined : Math.min(memory.progressAt, now);
  if (last !== undefined && now - last < everyMs) {
    memory.progressAt = last;
    return false;
  }
  memory.progressAt = now;
  return true;
}

/**
 * Event codes of `instinctevents` after which lh-run-watch polls at once: run status and run finished, as the
 * simulator sends them and under the names other firmware may use. The pushed frame is only a trigger: the poll
 * that follows decides (observe), so a change seen by a push and by a poll is reported once.
 */
const RUN_TRIGGER_CODES = new Set([
  'runstatus',
  'protocolrunstatus',
  'runstate',
  'runstatechanged',
  'protocolrunstate',
  'finished',
  'runfinished',
  'protocolfinished',
]);

/** Whether a pushed event (code as the client normalised it, any case) should make lh-run-watch poll now. */
export function triggersPoll(code: string): boolean {
  return RUN_TRIGGER_CODES.has(code.trim().toLowerCase());
}
