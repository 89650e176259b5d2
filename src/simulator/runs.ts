/**
 * Protocol runs: the run state machine behind protocol-run/*, protocols/names|{id}|validate and run-data.
 *
 *   create → Scheduling → Scheduled → Loading ─load-complete→ Running (step by step) → Idle + run record
 *   pause: Running → Pausing → Paused ─resume→ Running;   abort: any active state → Aborting → Idle
 *   an injected runtime error: Running → ErrorHandling ─answer Retry (or any other response)→ Running
 *                                                      ─answer Abort→ Aborting → Idle (result Failed)
 *
 * Each step takes its `duration` field (seconds) or DEFAULT_STEP_SECONDS of simulated time; real time is
 * simulated time divided by the simulation speed. Timers come from the simulator (stop() clears them).
 * Choices where the observed API is silent: a second create while a run is active is 409 naming the run; create
 * answers at once ({runId, protocolRunState}) and the run reaches Loading by itself; cleanup-unloading is
 * accepted in Idle and cancels a run still in Loading; `currentStep` is the running step's name.
 *
 * Scripted endings (`endNext`, PUT /sim/run {endNext}) make the next run end as in the failures a review reproduced:
 * aborted while Scheduling (Scheduling → Aborting → Idle, no record), aborted at the deck check after
 * load-complete (Loading → Aborting → Idle; a record only when a result word is given), or finished with a run
 * record in the given words ("Not completed", "Incomplete", …) instead of Completed.
 *
 * Live events go out through `RunMachineOptions.events` (the simulator sends them on `instinctevents`):
 * `RunStatus` on every state change (data: the run status as GET protocol-run serves it), `TimeRemaining`
 * whenever a running segment is planned (a step starts, the run resumes, the speed changes: at most once per
 * step segment), `Finished` when a run ends (data: result, run record id, protocol, times).
 */
import { randomUUID } from 'crypto';
import { HttpProblem, problem } from './problem';
import { FieldErrors, field, isObject, optionalBoolean, requireInt32, requireObject } from './json-fields';
import { RUN_STATE_NAMES, type RunStateName } from '../spec/contract';
import type { Reply } from './router';
import type { StepStore } from './steps';
import type { RuntimeErrorBook } from './runtime-errors';
import type { PendingError, Protocol, Step } from './types';
import { RunRecordBook, type RunResult, type StepLog } from './run-records';

export const RUN_STATES = RUN_STATE_NAMES;
export type { RunStateName };

/** The instrument's "not set" date. */
export const NOT_SET = '0001-01-01T00:00:00';
export const DEFAULT_STEP_SECONDS = 10;
/** Simulated seconds spent in the passing states. */
export const PHASE_SECONDS = { scheduling: 2, scheduled: 1, pausing: 2, aborting: 3 } as const;

export interface RunClock {
  now(): number;
  /** Runs fn after ms; the returned function cancels it. */
  schedule(ms: number, fn: () => void): () => void;
}

export interface RunStatus {
  protocolRunState: number | RunStateName;
  isRunInProgress: boolean;
  isSimulation: boolean;
  protocolId: number;
  protocolName: string;
  currentStep: string;
  currentStepNumber: number;
  stepCount: number;
  startTime: string;
  estimatedEndTime: string;
}

/** A run error to raise when a step starts (POST /sim/run/error with atStep). */
export interface RunErrorSeed {
  title?: string;
  message?: string;
  responses?: string[];
  /** 1-based step number; absent: now (the run must be Running) */
  atStep?: number;
}

interface RunStep {
  name: string;
  stepType: string;
  seconds: number;
  fields: Record<string, unknown>;
  log?: StepLog;
}

interface ActiveRun {
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

/** How the next run ends (PUT /sim/run {endNext}). */
export interface RunEnding {
  at: 'scheduling' | 'deck-check' | 'end';
  /** the run record's result word; absent: no record for an abort, Completed for `end` */
  result?: string;
}

/** Reads an `endNext` spec; throws a RangeError naming the field and the rule. */
export function runEnding(spec: unknown): RunEnding {
  const o = isObject(spec) ? spec : {};
  const at = o.at;
  if (at !== 'scheduling' && at !== 'deck-check' && at !== 'end') {
    throw new RangeError("endNext.at must be 'scheduling', 'deck-check' or 'end'");
  }
  if (o.result !== undefined && typeof o.result !== 'string') throw new RangeError('endNext.result must be text');
  return o.result === undefined ? { at } : { at, result: o.result };
}

/** Receives the run's live events (code, description, data); the simulator publishes them on `instinctevents`. */
export type RunEventSink = (code: RunEventCode, description: string, data: Record<string, unknown>) => void;
export type RunEventCode = 'RunStatus' | 'TimeRemaining' | 'Finished';

export interface RunMachineOptions {
  clock: RunClock;
  events?: RunEventSink;
  steps: StepStore;
  errors: RuntimeErrorBook;
  speed?: number;
  statesAsNames?: boolean;
}

export class RunMachine {
  readonly records = new RunRecordBook();
  private run?: ActiveRun;
  private speedValue: number;
  private readonly initialSpeed: number;
  statesAsNames: boolean;
  private readonly initialNames: boolean;
  private readonly clock: RunClock;
  private readonly steps: StepStore;
  private readonly errors: RuntimeErrorBook;
  private readonly events: RunEventSink;
  /** every state entered, for tests and /sim/run (bounded) */
  readonly transitions: { state: RunStateName; at: number }[] = [];

  constructor(options: RunMachineOptions) {
    this.clock = options.clock;
    this.steps = options.steps;
    this.errors = options.errors;
    this.events = options.events ?? (() => undefined);
    this.initialSpeed = this.speedValue = checkSpeed(options.speed ?? 1);
    this.initialNames = this.statesAsNames = options.statesAsNames ?? false;
  }

  private createFaults: ({ reset: true } | { status: number })[] = [];
  private endings: RunEnding[] = [];

  /** The next run (one per call, in order) ends as `spec` says: see RunEnding. */
  endNext(spec: unknown): void {
    this.endings.push(runEnding(spec));
  }

  /** The next `count` creates fail without creating anything: with `status`, or by a connection reset. */
  failNextCreates(spec: unknown): void {
    const o = isObject(spec) ? spec : {};
    const count = typeof o.count === 'number' && Number.isInteger(o.count) && o.count > 0 ? o.count : 1;
    const status =
      typeof o.status === 'number' && Number.isInteger(o.status) && o.status >= 400 && o.status <= 599 ? o.status : 503;
    for (let i = 0; i < count; i++) this.createFaults.push(o.reset === true ? { reset: true } : { status });
  }

  /** The fault for this create, if one is planned. */
  takeCreateFault(): Reply | undefined {
    const fault = this.createFaults.shift();
    if (!fault) return undefined;
    if ('reset' in fault) return { status: 0, resetConnection: true };
    return {
      status: fault.status,
      body: problem(fault.status, `Fault injected by the simulator on create (HTTP ${fault.status}).`),
    };
  }

  get state(): RunStateName {
    return this.run?.state ?? 'Idle';
  }

  get speed(): number {
    return this.speedValue;
  }

  /**
   * PUT takes the speed as text (`"2"`, as the hardware-tested client sends it) or as a number, in both modes (the
   * specification says nothing of it). GET gives it as text when lenient (the default, as observed), as a number
   * when strict, so clients are tested against both.
   */
  speedAsText = false;

  /** The speed as GET protocol-run/simulation-speed gives it. */
  get speedOnWire(): number | string {
    return this.speedAsText ? String(this.speedValue) : this.speedValue;
  }

  /** Back to Idle, no records, the configured speed and state format. */
  reset(): void {
    this.run?.cancel?.();
    this.run = undefined;
    this.createFaults = [];
    this.endings = [];
    this.records.clear();
    this.transitions.length = 0;
    this.speedValue = this.initialSpeed;
    this.statesAsNames = this.initialNames;
  }

  /** Called by the error book when any runtime error gets handled (answered, resolved or cleared). */
  errorHandled(error: PendingError): void {
    const run = this.run;
    if (!run || run.pendingErrorId !== error.id) return;
    run.pendingErrorId = undefined;
    const entry = run.errorLog.find((e) => e.id === error.id);
    if (entry) entry.selectedResponse = error.selectedResponse;
    if (error.selectedResponse === 'Abort') this.abortRun(run, 'Failed');
    else if (run.state === 'ErrorHandling') this.resumeRunning(run);
  }

  setSpeed(speed: unknown): void {
    const text = typeof speed === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(speed);
    const next = checkSpeed(text ? Number(speed) : speed);
    const run = this.run;
    if (run && run.state === 'Running') this.checkpoint(run);
    this.speedValue = next;
    if (run && run.state === 'Running') this.scheduleStepEnd(run);
  }

  // ---- protocols --------------------------------------------------------------------------------

  names(): { protocolId: number; name: string; isVisible: boolean }[] {
    return [...this.steps.protocols.values()].map((p) => ({ protocolId: p.id, name: p.name, isVisible: true }));
  }

  protocol(id: number, full: boolean): Record<string, unknown> {
    const p = this.steps.protocol(id);
    const problems = validationErrors(p);
    const ordered = [...p.steps].sort((a, b) => a.stepOrder - b.stepOrder);
    return {
      protocolId: p.id,
      name: p.name,
      isValid: problems.length === 0,
      validationErrors: problems,
      steps: full
        ? ordered.map((s) => ({ ...s }))
        : ordered.map((s) => ({ stepType: s.stepType, id: s.id, name: s.name, stepOrder: s.stepOrder, disabled: s.disabled })),
    };
  }

  validate(id: number): { protocolId: number; isValid: boolean; validationErrors: string[] } {
    const problems = validationErrors(this.steps.protocol(id));
    return { protocolId: id, isValid: problems.length === 0, validationErrors: problems };
  }

  // ---- protocol-run -----------------------------------------------------------------------------

  status(): RunStatus {
    const run = this.run;
    const state = this.state;
    const now = this.clock.now();
    const step = run && run.startTime !== undefined ? run.steps[run.index] : undefined;
    return {
      protocolRunState: this.statesAsNames ? state : RUN_STATES.indexOf(state),
      isRunInProgress: run !== undefined,
      isSimulation: run?.simulate ?? false,
      protocolId: run?.protocolId ?? 0,
      protocolName: run?.protocolName ?? '',
      currentStep: step?.name ?? '',
      currentStepNumber: step ? run!.index + 1 : 0,
      stepCount: run?.steps.length ?? 0,
      startTime: run?.startTime !== undefined ? iso(run.startTime) : NOT_SET,
      estimatedEndTime: run?.startTime !== undefined ? iso(now + (this.remainingSeconds(run) * 1000) / this.speedValue) : NOT_SET,
    };
  }

  create(body: unknown, userName: string): { runId: string; protocolRunState: number | RunStateName } {
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const protocolId = errors.check(() => requireInt32(obj, 'protocolId'));
    const simulate = errors.check(() => optionalBoolean(obj, 'simulate'));
    errors.check(() => optionalBoolean(obj, 'recompile'));
    errors.throwIfAny();
    const p = this.steps.protocol(protocolId as number);
    if (this.run) {
      throw new HttpProblem(
        409,
        `A run of protocol '${this.run.protocolName}' (${this.run.protocolId}) is in progress (state ${this.run.state}).`,
      );
    }
    const problems = validationErrors(p);
    if (problems.length > 0) throw new HttpProblem(400, `Protocol ${p.id} is not valid: ${problems.join(' ')}`);
    const steps = [...p.steps]
      .filter((s) => !s.disabled)
      .sort((a, b) => a.stepOrder - b.stepOrder)
      .map((s) => ({ name: s.name, stepType: s.stepType, seconds: stepSeconds(s), fields: variantOf(s) }));
    const run: ActiveRun = {
      runId: randomUUID(),
      protocolId: p.id,
      protocolName: p.name,
      simulate: simulate ?? false,
      userName,
      steps,
      state: 'Idle',
      index: 0,
      remaining: steps[0]?.seconds ?? 0,
      armedErrors: [],
      errorLog: [],
      scripted: this.endings.shift(),
    };
    this.run = run;
    this.enter(run, 'Scheduling');
    if (run.scripted?.at === 'scheduling') {
      this.after(run, PHASE_SECONDS.scheduling, () => this.abortRun(run, run.scripted?.result));
      return { runId: run.runId, protocolRunState: this.formatState('Scheduling') };
    }
    this.after(run, PHASE_SECONDS.scheduling, () => {
      this.enter(run, 'Scheduled');
      this.after(run, PHASE_SECONDS.scheduled, () => this.enter(run, 'Loading'));
    });
    return { runId: run.runId, protocolRunState: this.formatState('Scheduling') };
  }

  loadInstructions(): Record<string, unknown>[] {
    const run = this.requireState(['Loading'], 'load instructions');
    const out: Record<string, unknown>[] = [
      { position: 'TipRack1', labware: 'Tips 300 ul', description: 'Load a full rack of tips' },
    ];
    for (const s of run.steps) {
      for (const d of Array.isArray(s.fields.destinations) ? s.fields.destinations : []) {
        const o = isObject(d) ? d : {};
        out.push({
          position: String(o.labware ?? 'Deck'),
          labware: String(o.labware ?? 'Plate'),
          description: `For step '${s.name}': wells ${String(o.wells ?? '')}`,
        });
      }
      if (typeof s.fields.platePosition === 'string') {
        out.push({ position: s.fields.platePosition, labware: 'Plate', description: `For step '${s.name}'` });
      }
    }
    return out;
  }

  loadComplete(body: unknown): void {
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const protocolId = errors.check(() => requireInt32(obj, 'protocolId'));
    errors.check(() => optionalBoolean(obj, 'simulate'));
    const action = field(obj, 'loadCompleteAction');
    if (
      action !== undefined &&
      action !== null &&
      (typeof action !== 'string' || !['run', 'cancel'].includes(action.toLowerCase()))
    ) {
      errors.add('loadCompleteAction', "loadCompleteAction must be 'Run' or 'Cancel'.");
    }
    for (const list of ['residualTips', 'barcodes', 'liquidVolumes']) {
      const v = field(obj, list);
      if (v !== undefined && v !== null && !Array.isArray(v)) errors.add(list, `${list} must be an array.`);
    }
    errors.throwIfAny();
    const run = this.requireState(['Loading'], 'load-complete');
    if (protocolId !== run.protocolId) {
      throw new HttpProblem(400, `protocolId ${String(protocolId)} is not the protocol being loaded (${run.protocolId}).`, {
        errors: { protocolId: [`The run being loaded is protocol ${run.protocolId}.`] },
      });
    }
    if (typeof action === 'string' && action.toLowerCase() === 'cancel') {
      this.finish(run, undefined);
      return;
    }
    if (run.scripted?.at === 'deck-check') {
      this.abortRun(run, run.scripted.result);
      return;
    }
    run.startTime = this.clock.now();
    this.startStep(run);
  }

  pause(): void {
    const run = this.requireState(['Running'], 'pause');
    this.checkpoint(run);
    this.enter(run, 'Pausing');
    this.after(run, PHASE_SECONDS.pausing, () => this.enter(run, 'Paused'));
  }

  resume(): void {
    const run = this.requireState(['Paused', 'Pausing'], 'resume');
    this.resumeRunning(run);
  }

  abort(): void {
    const run = this.requireState(
      ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Pausing', 'Paused', 'ErrorHandling', 'Reloading'],
      'abort',
    );
    this.abortRun(run, 'Aborted');
  }

  cleanupUnloading(): void {
    const run = this.run;
    if (!run) return;
    if (run.state !== 'Loading') throw new HttpProblem(409, `Cannot clean up while the run is ${run.state}.`);
    this.finish(run, undefined);
  }

  /** POST /sim/run/error: raises a runtime error now (the run must be Running) or when step `atStep` starts. */
  injectError(seed: RunErrorSeed): { armed: boolean; error?: PendingError } {
    const run = this.run;
    if (!run) throw new HttpProblem(409, 'No run is in progress.');
    if (seed.atStep !== undefined) {
      if (!Number.isInteger(seed.atStep) || seed.atStep < 1 || seed.atStep > run.steps.length) {
        throw new HttpProblem(400, `atStep must be a step number from 1 to ${run.steps.length}.`);
      }
      if (run.startTime === undefined || seed.atStep > run.index + 1) {
        run.armedErrors.push(seed);
        return { armed: true };
      }
    }
    if (run.state !== 'Running') throw new HttpProblem(409, `The run is ${run.state}, not Running.`);
    return { armed: false, error: this.raise(run, seed) };
  }

  /** After a restart of the simulator (whose stop() cleared every timer): plans the run's next transition again. */
  rearm(): void {
    const run = this.run;
    if (!run) return;
    switch (run.state) {
      case 'Scheduling':
      case 'Scheduled':
        this.after(run, PHASE_SECONDS.scheduled, () => this.enter(run, 'Loading'));
        break;
      case 'Running':
        this.checkpoint(run);
        this.scheduleStepEnd(run);
        break;
      case 'Pausing':
        this.after(run, PHASE_SECONDS.pausing, () => this.enter(run, 'Paused'));
        break;
      case 'Aborting':
        this.after(run, PHASE_SECONDS.aborting, () => this.finish(run, run.ending));
        break;
      default:
        break;
    }
  }

  // ---- internals --------------------------------------------------------------------------------

  private formatState(state: RunStateName): number | RunStateName {
    return this.statesAsNames ? state : RUN_STATES.indexOf(state);
  }

  private enter(run: ActiveRun, state: RunStateName): void {
    if (this.run !== run || run.state === state) return;
    run.state = state;
    this.transitions.push({ state, at: this.clock.now() });
    if (this.transitions.length > 1000) this.transitions.shift();
    this.publishStatus();
  }

  private publishStatus(): void {
    const status = this.status();
    this.events('RunStatus', `Run state ${this.state}`, { ...status });
  }

  private publishTimeRemaining(run: ActiveRun): void {
    const status = this.status();
    this.events('TimeRemaining', `${Math.round(this.remainingSeconds(run) / this.speedValue)} s remaining`, {
      timeRemaining: Math.round((this.remainingSeconds(run) * 1000) / this.speedValue) / 1000,
      estimatedEndTime: status.estimatedEndTime,
      protocolId: run.protocolId,
      protocolName: run.protocolName,
      currentStep: status.currentStep,
      currentStepNumber: status.currentStepNumber,
      stepCount: status.stepCount,
    });
  }

  private after(run: ActiveRun, simSeconds: number, fn: () => void): void {
    run.cancel?.();
    const cancel = this.clock.schedule((simSeconds * 1000) / this.speedValue, () => {
      if (run.cancel === cancel) run.cancel = undefined;
      if (this.run === run) fn();
    });
    run.cancel = cancel;
  }

  private requireState(states: RunStateName[], what: string): ActiveRun {
    const run = this.run;
    if (!run) throw new HttpProblem(409, `Cannot ${what}: no run is in progress.`);
    if (!states.includes(run.state)) throw new HttpProblem(409, `Cannot ${what} while the run is ${run.state}.`);
    return run;
  }

  private remainingSeconds(run: ActiveRun): number {
    let left = run.remaining;
    if (run.state === 'Running' && run.segmentStart !== undefined) {
      left -= ((this.clock.now() - run.segmentStart) * this.speedValue) / 1000;
    }
    for (let i = run.index + 1; i < run.steps.length; i++) left += run.steps[i].seconds;
    return Math.max(0, left);
  }

  /** Books the simulated time run so far into the running step. */
  private checkpoint(run: ActiveRun): void {
    if (run.segmentStart === undefined) return;
    run.remaining = Math.max(0, run.remaining - ((this.clock.now() - run.segmentStart) * this.speedValue) / 1000);
    run.segmentStart = undefined;
    run.cancel?.();
    run.cancel = undefined;
  }

  private startStep(run: ActiveRun): void {
    if (run.index >= run.steps.length) {
      this.finish(run, run.scripted?.at === 'end' ? (run.scripted.result ?? 'Completed') : 'Completed');
      return;
    }
    const step = run.steps[run.index];
    run.remaining = step.seconds;
    step.log = {
      name: step.name,
      stepType: step.stepType,
      startTime: iso(this.clock.now()),
      endTime: null,
      status: 'Interrupted',
      fields: step.fields,
    };
    const armed = run.armedErrors.findIndex((e) => e.atStep === run.index + 1);
    if (armed >= 0) {
      const [seed] = run.armedErrors.splice(armed, 1);
      this.enter(run, 'Running');
      this.raise(run, seed);
      return;
    }
    this.resumeRunning(run);
  }

  private resumeRunning(run: ActiveRun): void {
    run.cancel?.();
    run.cancel = undefined;
    this.enter(run, 'Running');
    this.scheduleStepEnd(run);
  }

  private scheduleStepEnd(run: ActiveRun): void {
    this.after(run, run.remaining, () => {
      run.segmentStart = undefined;
      const step = run.steps[run.index];
      if (step.log) {
        step.log.endTime = iso(this.clock.now());
        step.log.status = 'Done';
      }
      run.index++;
      this.startStep(run);
    });
    run.segmentStart = this.clock.now();
    this.publishTimeRemaining(run);
  }

  private raise(run: ActiveRun, seed: RunErrorSeed): PendingError {
    this.checkpoint(run);
    const step = run.steps[run.index];
    const error = this.errors.inject({
      title: seed.title ?? 'Liquid level not detected',
      message: seed.message ?? `No liquid was detected during step '${step?.name ?? ''}'.`,
      severity: 'Error',
      responses: seed.responses && seed.responses.length > 0 ? seed.responses : ['Retry', 'Abort'],
    });
    run.pendingErrorId = error.id;
    run.errorLog.push({ id: error.id, title: error.title, time: iso(this.clock.now()), selectedResponse: null });
    this.enter(run, 'ErrorHandling');
    return error;
  }

  private abortRun(run: ActiveRun, result: RunResult | undefined): void {
    this.checkpoint(run);
    const pending = run.pendingErrorId;
    run.pendingErrorId = undefined;
    if (pending) {
      try {
        this.errors.resolve(pending);
      } catch {
        // already gone from the book
      }
    }
    run.ending = result;
    this.enter(run, 'Aborting');
    this.after(run, PHASE_SECONDS.aborting, () => this.finish(run, result));
  }

  /** Ends the run; a run that started gets a record (`result` undefined: cancelled before it started, no record). */
  private finish(run: ActiveRun, result: RunResult | undefined): void {
    run.cancel?.();
    run.cancel = undefined;
    if (result !== undefined) {
      const end = iso(this.clock.now());
      this.records.add({
        id: run.runId,
        protocolId: run.protocolId,
        protocolName: run.protocolName,
        startTime: iso(run.startTime ?? this.clock.now()),
        endTime: end,
        runResult: result,
        userName: run.userName,
        isSimulation: run.simulate,
        steps: run.steps.map(
          (s) =>
            s.log ?? { name: s.name, stepType: s.stepType, startTime: end, endTime: null, status: 'NotRun', fields: s.fields },
        ),
        errors: run.errorLog.map((e) => ({ ...e })),
      });
    }
    this.run = undefined;
    this.transitions.push({ state: 'Idle', at: this.clock.now() });
    if (this.transitions.length > 1000) this.transitions.shift();
    this.publishStatus();
    this.events('Finished', `Run of '${run.protocolName}' ${result ?? 'Cancelled'}`, {
      result: result ?? 'Cancelled',
      runRecordId: result !== undefined ? run.runId : null,
      runId: run.runId,
      protocolId: run.protocolId,
      protocolName: run.protocolName,
      isSimulation: run.simulate,
      startTime: run.startTime !== undefined ? iso(run.startTime) : NOT_SET,
      endTime: iso(this.clock.now()),
    });
  }
}

function checkSpeed(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 100_000) {
    throw new HttpProblem(400, 'simulationSpeed must be a number greater than 0 and at most 100000.', {
      errors: { simulationSpeed: ['simulationSpeed must be a number greater than 0 and at most 100000.'] },
    });
  }
  return value;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
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
