/**
 * The run state machine's decisions, as pure functions of the run and the time: which states an operation is
 * allowed in, what a passing state leads to and after how long, where a step's simulated time stands, how a run
 * ends. The machine (run-machine.ts) applies them with the timers it is given.
 *
 *   create → Scheduling → Scheduled → Loading ─load-complete→ Running (step by step) → Idle + run record
 *   pause: Running → Pausing → Paused ─resume→ Running;   abort: any active state → Aborting → Idle
 *   an injected runtime error: Running → ErrorHandling ─answer Retry (or any other response)→ Running
 *                                                      ─answer Abort→ Aborting → Idle (result Failed)
 */
import { RUN_STATE_NAMES, type RunStateName } from '../contract/instrument-contract';
import { HttpProblem } from './problem';
import type { RunResult, StepLog } from './run-records';
import type { Protocol, Step } from './types';

export const RUN_STATES = RUN_STATE_NAMES;
export type { RunStateName };

/** The instrument's "not set" date. */
export const NOT_SET = '0001-01-01T00:00:00';
export const DEFAULT_STEP_SECONDS = 10;
/** Simulated seconds spent in the passing states. */
export const PHASE_SECONDS = { scheduling: 2, scheduled: 1, pausing: 2, aborting: 3 } as const;

/** A run error to raise when a step starts (POST /sim/run/error with atStep). */
export interface RunErrorSeed {
  title?: string;
  message?: string;
  responses?: string[];
  /** 1-based step number; absent: now (the run must be Running) */
  atStep?: number;
}

/** How the next run ends (PUT /sim/run {endNext}). */
export interface RunEnding {
  at: 'scheduling' | 'deck-check' | 'end';
  /** the run record's result word; absent: no record for an abort, Completed for `end` */
  result?: string;
}

export interface RunStep {
  name: string;
  stepType: string;
  seconds: number;
  fields: Record<string, unknown>;
  log?: StepLog;
}

export interface ActiveRun {
  runId: string;
  protocolId: number;
  protocolName: string;
  simulate: boolean;
  userName: string;
  steps: RunStep[];
  state: RunStateName;
  /** index into steps of the running step */
  index: number;
  /** simulated seconds left of the running step */
  remaining: number;
  /** real ms when the current running segment began (undefined while not running) */
  segmentStart?: number;
  startTime?: number;
  pendingErrorId?: string;
  armedErrors: RunErrorSeed[];
  /** the result an abort in progress will record (undefined: no record) */
  ending?: RunResult;
  /** how this run was scripted to end (endNext) */
  scripted?: RunEnding;
  errorLog: { id: string; title: string; time: string; selectedResponse: string | null }[];
  cancel?: () => void;
}

/** The operations of protocol-run/* that need a run in a given state. */
export type RunAction = 'load instructions' | 'load-complete' | 'pause' | 'resume' | 'abort';

/** The states each operation is allowed in (any other state: 409). */
export const ALLOWED_STATES: Record<RunAction, readonly RunStateName[]> = {
  'load instructions': ['Loading'],
  'load-complete': ['Loading'],
  pause: ['Running'],
  resume: ['Paused', 'Pausing'],
  abort: ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Pausing', 'Paused', 'ErrorHandling', 'Reloading'],
};

/** The run when `action` is allowed now; a 409 naming the state otherwise. */
export function requireState(run: ActiveRun | undefined, action: RunAction): ActiveRun {
  if (!run) throw new HttpProblem(409, `Cannot ${action}: no run is in progress.`);
  if (!ALLOWED_STATES[action].includes(run.state)) throw new HttpProblem(409, `Cannot ${action} while the run is ${run.state}.`);
  return run;
}

/** What a timer planned in a passing state does when it fires. */
export type PhaseEnd = { seconds: number; then: 'Scheduled' | 'Loading' | 'Paused' | 'finish' | 'abort' };

/** The timer that takes the run on from a passing state just entered (`finish` records the abort's `ending`). */
export function phaseAfterEntering(state: 'Scheduling' | 'Scheduled' | 'Pausing' | 'Aborting', scripted?: RunEnding): PhaseEnd {
  switch (state) {
    case 'Scheduling':
      return { seconds: PHASE_SECONDS.scheduling, then: scripted?.at === 'scheduling' ? 'abort' : 'Scheduled' };
    case 'Scheduled':
      return { seconds: PHASE_SECONDS.scheduled, then: 'Loading' };
    case 'Pausing':
      return { seconds: PHASE_SECONDS.pausing, then: 'Paused' };
    case 'Aborting':
      return { seconds: PHASE_SECONDS.aborting, then: 'finish' };
  }
}

/**
 * After a restart (whose stop() cleared every timer): the timer to plan again for a run in `state`; 'step' for a
 * running step, undefined where the run waits for someone (Loading, Paused, ErrorHandling).
 */
export function rearmPlan(state: RunStateName): PhaseEnd | 'step' | undefined {
  switch (state) {
    case 'Scheduling':
    case 'Scheduled':
      return { seconds: PHASE_SECONDS.scheduled, then: 'Loading' };
    case 'Running':
      return 'step';
    case 'Pausing':
      return { seconds: PHASE_SECONDS.pausing, then: 'Paused' };
    case 'Aborting':
      return { seconds: PHASE_SECONDS.aborting, then: 'finish' };
    default:
      return undefined;
  }
}

/** Simulated seconds run since `segmentStart` (real ms) at `speed`. */
function elapsedSeconds(run: ActiveRun, now: number, speed: number): number {
  return run.segmentStart === undefined ? 0 : ((now - run.segmentStart) * speed) / 1000;
}

/** What is left of the running step once the time run so far is booked into it. */
export function remainingAfterCheckpoint(run: ActiveRun, now: number, speed: number): number {
  return Math.max(0, run.remaining - elapsedSeconds(run, now, speed));
}

/** Simulated seconds left of the whole run. */
export function remainingSeconds(run: ActiveRun, now: number, speed: number): number {
  let left = run.remaining;
  if (run.state === 'Running') left -= elapsedSeconds(run, now, speed);
  for (let i = run.index + 1; i < run.steps.length; i++) left += run.steps[i].seconds;
  return Math.max(0, left);
}

/** The result a run records when its last step is done. */
export function resultAtEnd(run: ActiveRun): RunResult {
  return run.scripted?.at === 'end' ? (run.scripted.result ?? 'Completed') : 'Completed';
}

/** What load-complete does: cancel the run, abort it at the deck check (scripted), or start the first step. */
export function loadCompleteOutcome(run: ActiveRun, action: unknown): 'cancel' | 'abort' | 'start' {
  if (typeof action === 'string' && action.toLowerCase() === 'cancel') return 'cancel';
  if (run.scripted?.at === 'deck-check') return 'abort';
  return 'start';
}

/** The index of the error armed for the step about to start (-1: none). */
export function armedErrorIndex(run: ActiveRun): number {
  return run.armedErrors.findIndex((e) => e.atStep === run.index + 1);
}

/** Whether a seed with `atStep` waits for its step (true) or is raised now (false); a 400 for a step out of range. */
export function armsForLater(run: ActiveRun, atStep: number | undefined): boolean {
  if (atStep === undefined) return false;
  if (!Number.isInteger(atStep) || atStep < 1 || atStep > run.steps.length) {
    throw new HttpProblem(400, `atStep must be a step number from 1 to ${run.steps.length}.`);
  }
  return run.startTime === undefined || atStep > run.index + 1;
}

/** A simulation speed from PUT (text such as "2", or a number); a 400 naming simulationSpeed otherwise. */
export function parseSpeed(speed: unknown): number {
  const text = typeof speed === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(speed);
  return checkSpeed(text ? Number(speed) : speed);
}

export function checkSpeed(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 100_000) {
    throw new HttpProblem(400, 'simulationSpeed must be a number greater than 0 and at most 100000.', {
      errors: { simulationSpeed: ['simulationSpeed must be a number greater than 0 and at most 100000.'] },
    });
  }
  return value;
}

/** The steps a run of `p` goes through: enabled ones, in order, with their simulated seconds and variant fields. */
export function runStepsOf(p: Protocol): RunStep[] {
  return [...p.steps]
    .filter((s) => !s.disabled)
    .sort((a, b) => a.stepOrder - b.stepOrder)
    .map((s) => ({ name: s.name, stepType: s.stepType, seconds: stepSeconds(s), fields: variantOf(s) }));
}

function stepSeconds(step: Step): number {
  const d = step.duration;
  return typeof d === 'number' && Number.isFinite(d) && d > 0 ? d : DEFAULT_STEP_SECONDS;
}

function variantOf(step: Step): Record<string, unknown> {
  const { stepType: _t, id: _i, name: _n, stepOrder: _o, disabled: _d, ...rest } = step;
  return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
}

/** Why a protocol cannot run (empty: it can). */
export function validationErrors(p: Protocol): string[] {
  const enabled = p.steps.filter((s) => !s.disabled);
  if (p.steps.length === 0) return ['The protocol has no steps.'];
  if (enabled.length === 0) return ['Every step of the protocol is disabled.'];
  return [];
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
