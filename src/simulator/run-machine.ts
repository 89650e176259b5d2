/**
 * Protocol runs: the state machine behind protocol-run/*, protocols/names|{id}|validate and run-data. Its decisions
 * are the pure functions of run-transitions.ts (states, timing, endings) and run-views.ts (what is served); this
 * class holds the one active run and applies them with the injected clock (the simulator's timers: stop() clears
 * them, rearm() plans them again after a restart).
 *
 * Each step takes its `duration` field (seconds) or DEFAULT_STEP_SECONDS of simulated time; real time is
 * simulated time divided by the simulation speed.
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
import { HttpProblem } from './problem';
import type { Reply } from './router';
import type { StepStore } from './steps';
import type { RuntimeErrorBook } from './runtime-errors';
import type { PendingError } from './types';
import { RunRecordBook, type RunResult } from './run-records';
import { readCreate, readLoadComplete } from './run-requests';
import { RunScript } from './run-script';
import {
  armedErrorIndex,
  armsForLater,
  checkSpeed,
  iso,
  loadCompleteOutcome,
  parseSpeed,
  phaseAfterEntering,
  rearmPlan,
  remainingAfterCheckpoint,
  requireState,
  resultAtEnd,
  runStepsOf,
  validationErrors,
  type ActiveRun,
  type PhaseEnd,
  type RunEnding,
  type RunErrorSeed,
  type RunStateName,
} from './run-transitions';
import {
  finishedEvent,
  loadInstructionsOf,
  protocolView,
  runRecordOf,
  runStatus,
  stateOnWire,
  timeRemainingEvent,
  type RunStatus,
  type RunView,
} from './run-views';

export type { RunErrorSeed, RunEnding, RunStatus };

export interface RunClock {
  now(): number;
  /** Runs fn after ms; the returned function cancels it. */
  schedule(ms: number, fn: () => void): () => void;
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

/** Bound of `transitions`. */
const MAX_TRANSITIONS = 1000;

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
  private readonly script = new RunScript();

  /**
   * PUT takes the speed as text (`"2"`, as the hardware-tested client sends it) or as a number, in both modes (the
   * specification says nothing of it). GET gives it as text when lenient (the default, as observed), as a number
   * when strict, so clients are tested against both.
   */
  speedAsText = false;

  constructor(options: RunMachineOptions) {
    this.clock = options.clock;
    this.steps = options.steps;
    this.errors = options.errors;
    this.events = options.events ?? (() => undefined);
    this.initialSpeed = this.speedValue = checkSpeed(options.speed ?? 1);
    this.initialNames = this.statesAsNames = options.statesAsNames ?? false;
  }

  /** The next run (one per call, in order) ends as `spec` says: see RunEnding. */
  endNext(spec: unknown): void {
    this.script.endNext(spec);
  }

  /** The next `count` creates fail without creating anything: with `status`, or by a connection reset. */
  failNextCreates(spec: unknown): void {
    this.script.failNextCreates(spec);
  }

  /** The fault for this create, if one is planned. */
  takeCreateFault(): Reply | undefined {
    return this.script.takeCreateFault();
  }

  get state(): RunStateName {
    return this.run?.state ?? 'Idle';
  }

  get speed(): number {
    return this.speedValue;
  }

  /** The speed as GET protocol-run/simulation-speed gives it. */
  get speedOnWire(): number | string {
    return this.speedAsText ? String(this.speedValue) : this.speedValue;
  }

  /** Back to Idle, no records, the configured speed and state format. */
  reset(): void {
    this.run?.cancel?.();
    this.run = undefined;
    this.script.clear();
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
    const next = parseSpeed(speed);
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
    return protocolView(this.steps.protocol(id), full);
  }

  validate(id: number): { protocolId: number; isValid: boolean; validationErrors: string[] } {
    const problems = validationErrors(this.steps.protocol(id));
    return { protocolId: id, isValid: problems.length === 0, validationErrors: problems };
  }

  // ---- protocol-run -----------------------------------------------------------------------------

  status(): RunStatus {
    return runStatus(this.run, this.view());
  }

  create(body: unknown, userName: string): { runId: string; protocolRunState: number | RunStateName } {
    const { protocolId, simulate } = readCreate(body);
    const p = this.steps.protocol(protocolId);
    if (this.run) {
      throw new HttpProblem(
        409,
        `A run of protocol '${this.run.protocolName}' (${this.run.protocolId}) is in progress (state ${this.run.state}).`,
      );
    }
    const problems = validationErrors(p);
    if (problems.length > 0) throw new HttpProblem(400, `Protocol ${p.id} is not valid: ${problems.join(' ')}`);
    const steps = runStepsOf(p);
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
      scripted: this.script.takeEnding(),
    };
    this.run = run;
    this.enter(run, 'Scheduling');
    this.plan(run, phaseAfterEntering('Scheduling', run.scripted));
    return { runId: run.runId, protocolRunState: stateOnWire('Scheduling', this.statesAsNames) };
  }

  loadInstructions(): Record<string, unknown>[] {
    return loadInstructionsOf(requireState(this.run, 'load instructions'));
  }

  loadComplete(body: unknown): void {
    const { protocolId, action } = readLoadComplete(body);
    const run = requireState(this.run, 'load-complete');
    if (protocolId !== run.protocolId) {
      throw new HttpProblem(400, `protocolId ${String(protocolId)} is not the protocol being loaded (${run.protocolId}).`, {
        errors: { protocolId: [`The run being loaded is protocol ${run.protocolId}.`] },
      });
    }
    const outcome = loadCompleteOutcome(run, action);
    if (outcome === 'cancel') return this.finish(run, undefined);
    if (outcome === 'abort') return this.abortRun(run, run.scripted?.result);
    run.startTime = this.clock.now();
    this.startStep(run);
  }

  pause(): void {
    const run = requireState(this.run, 'pause');
    this.checkpoint(run);
    this.enter(run, 'Pausing');
    this.plan(run, phaseAfterEntering('Pausing'));
  }

  resume(): void {
    this.resumeRunning(requireState(this.run, 'resume'));
  }

  abort(): void {
    this.abortRun(requireState(this.run, 'abort'), 'Aborted');
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
    if (armsForLater(run, seed.atStep)) {
      run.armedErrors.push(seed);
      return { armed: true };
    }
    if (run.state !== 'Running') throw new HttpProblem(409, `The run is ${run.state}, not Running.`);
    return { armed: false, error: this.raise(run, seed) };
  }

  /** After a restart of the simulator (whose stop() cleared every timer): plans the run's next transition again. */
  rearm(): void {
    const run = this.run;
    if (!run) return;
    const plan = rearmPlan(run.state);
    if (plan === 'step') {
      this.checkpoint(run);
      this.scheduleStepEnd(run);
    } else if (plan) {
      this.plan(run, plan);
    }
  }

  // ---- applying the transitions -------------------------------------------------------------------

  private view(): RunView {
    return { now: this.clock.now(), speed: this.speedValue, statesAsNames: this.statesAsNames };
  }

  private record(state: RunStateName): void {
    this.transitions.push({ state, at: this.clock.now() });
    if (this.transitions.length > MAX_TRANSITIONS) this.transitions.shift();
  }

  private enter(run: ActiveRun, state: RunStateName): void {
    if (this.run !== run || run.state === state) return;
    run.state = state;
    this.record(state);
    this.publishStatus();
  }

  private publishStatus(): void {
    this.events('RunStatus', `Run state ${this.state}`, { ...this.status() });
  }

  /** Plans the timer a passing state ends with. */
  private plan(run: ActiveRun, phase: PhaseEnd): void {
    this.after(run, phase.seconds, () => {
      switch (phase.then) {
        case 'abort':
          return this.abortRun(run, run.scripted?.result);
        case 'finish':
          return this.finish(run, run.ending);
        case 'Scheduled':
          this.enter(run, 'Scheduled');
          return this.plan(run, phaseAfterEntering('Scheduled'));
        default:
          return this.enter(run, phase.then);
      }
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

  /** Books the simulated time run so far into the running step. */
  private checkpoint(run: ActiveRun): void {
    if (run.segmentStart === undefined) return;
    run.remaining = remainingAfterCheckpoint(run, this.clock.now(), this.speedValue);
    run.segmentStart = undefined;
    run.cancel?.();
    run.cancel = undefined;
  }

  private startStep(run: ActiveRun): void {
    if (run.index >= run.steps.length) return this.finish(run, resultAtEnd(run));
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
    const armed = armedErrorIndex(run);
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
    const { description, data } = timeRemainingEvent(run, this.view());
    this.events('TimeRemaining', description, data);
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
    this.plan(run, phaseAfterEntering('Aborting'));
  }

  /** Ends the run; a run that started gets a record (`result` undefined: cancelled before it started, no record). */
  private finish(run: ActiveRun, result: RunResult | undefined): void {
    run.cancel?.();
    run.cancel = undefined;
    const now = this.clock.now();
    if (result !== undefined) this.records.add(runRecordOf(run, result, now));
    this.run = undefined;
    this.record('Idle');
    this.publishStatus();
    const { description, data } = finishedEvent(run, result, this.clock.now());
    this.events('Finished', description, data);
  }
}
