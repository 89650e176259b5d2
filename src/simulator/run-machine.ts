/**
 * Protocol runs: the operations behind protocol-run/*, protocols/names|{id}|validate and run-data. Each checks its
 * request (run-requests.ts) and the run's state (run-transitions.ts: which states allow it), then hands the run to
 * the engine (run-engine.ts), which moves it through time. The states are drawn in run-transitions.ts.
 *
 * Choices where the observed API is silent: a second create while a run is active is 409 naming the run; create
 * answers at once ({runId, protocolRunState}) and the run reaches Loading by itself; cleanup-unloading is
 * accepted in Idle and cancels a run still in Loading; `currentStep` is the running step's name.
 *
 * Scripted endings (`endNext`, PUT /sim/run {endNext}) make the next run end as in the failures a review reproduced:
 * aborted while Scheduling (Scheduling → Aborting → Idle, no record), aborted at the deck check after
 * load-complete (Loading → Aborting → Idle; a record only when a result word is given), or finished with a run
 * record in the given words ("Not completed", "Incomplete", …) instead of Completed.
 */
import { randomUUID } from 'crypto';

import { HttpProblem } from './problem';
import type { Reply } from './router';
import { type RunClock, RunEngine, type RunEventSink } from './run-engine';
import type { RunRecordBook } from './run-records';
import { readCreate, readLoadComplete } from './run-requests';
import { RunScript } from './run-script';
import {
  armsForLater,
  checkSpeed,
  loadCompleteOutcome,
  parseSpeed,
  requireState,
  type RunEnding,
  type RunErrorSeed,
  type RunStateName,
  runStepsOf,
  validationErrors,
} from './run-transitions';
import { loadInstructionsOf, protocolView, type RunStatus, stateOnWire } from './run-views';
import type { RuntimeErrorBook } from './runtime-errors';
import type { StepStore } from './steps';
import type { PendingError } from './types';

export type { RunClock, RunEventCode, RunEventSink } from './run-engine';
export type { RunEnding, RunErrorSeed, RunStatus };

export interface RunMachineOptions {
  clock: RunClock;
  events?: RunEventSink;
  steps: StepStore;
  errors: RuntimeErrorBook;
  speed?: number;
  statesAsNames?: boolean;
}

export class RunMachine {
  private readonly engine: RunEngine;
  private readonly initialSpeed: number;
  private readonly initialNames: boolean;
  private readonly steps: StepStore;
  private readonly script = new RunScript();

  /**
   * PUT takes the speed as text (`"2"`, as the hardware-tested client sends it) or as a number, in both modes (the
   * specification says nothing of it). GET gives it as text when lenient (the default, as observed), as a number
   * when strict, so clients are tested against both.
   */
  speedAsText = false;

  constructor(options: RunMachineOptions) {
    this.steps = options.steps;
    this.initialSpeed = checkSpeed(options.speed ?? 1);
    this.initialNames = options.statesAsNames ?? false;
    const events = options.events ?? (() => undefined);
    this.engine = new RunEngine(options.clock, events, options.errors, this.initialSpeed, this.initialNames);
  }

  get records(): RunRecordBook {
    return this.engine.records;
  }

  /** every state entered, for tests and /sim/run (bounded) */
  get transitions(): { state: RunStateName; at: number }[] {
    return this.engine.transitions;
  }

  /** Whether run states are served as names (else as numbers). */
  get statesAsNames(): boolean {
    return this.engine.statesAsNames;
  }

  set statesAsNames(on: boolean) {
    this.engine.statesAsNames = on;
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
    return this.engine.run?.state ?? 'Idle';
  }

  get speed(): number {
    return this.engine.speed;
  }

  /** The speed as GET protocol-run/simulation-speed gives it. */
  get speedOnWire(): number | string {
    return this.speedAsText ? String(this.engine.speed) : this.engine.speed;
  }

  /** Back to Idle, no records, the configured speed and state format. */
  reset(): void {
    this.engine.reset();
    this.script.clear();
    this.engine.speed = this.initialSpeed;
    this.engine.statesAsNames = this.initialNames;
  }

  /** Called by the error book when any runtime error gets handled (answered, resolved or cleared). */
  errorHandled(error: PendingError): void {
    this.engine.errorHandled(error);
  }

  setSpeed(speed: unknown): void {
    this.engine.setSpeed(parseSpeed(speed));
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
    return this.engine.status();
  }

  create(body: unknown, userName: string): { runId: string; protocolRunState: number | RunStateName } {
    const { protocolId, simulate } = readCreate(body);
    const p = this.steps.protocol(protocolId);
    const active = this.engine.run;
    if (active) {
      throw new HttpProblem(
        409,
        `A run of protocol '${active.protocolName}' (${active.protocolId}) is in progress (state ${active.state}).`,
      );
    }
    const problems = validationErrors(p);
    if (problems.length > 0) throw new HttpProblem(400, `Protocol ${p.id} is not valid: ${problems.join(' ')}`);
    const steps = runStepsOf(p);
    const runId = randomUUID();
    this.engine.begin({
      runId,
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
    });
    return { runId, protocolRunState: stateOnWire('Scheduling', this.statesAsNames) };
  }

  loadInstructions(): Record<string, unknown>[] {
    return loadInstructionsOf(requireState(this.engine.run, 'load instructions'));
  }

  loadComplete(body: unknown): void {
    const { protocolId, action } = readLoadComplete(body);
    const run = requireState(this.engine.run, 'load-complete');
    if (protocolId !== run.protocolId) {
      throw new HttpProblem(400, `protocolId ${String(protocolId)} is not the protocol being loaded (${run.protocolId}).`, {
        errors: { protocolId: [`The run being loaded is protocol ${run.protocolId}.`] },
      });
    }
    const outcome = loadCompleteOutcome(run, action);
    if (outcome === 'cancel') this.engine.finish(run, undefined);
    else if (outcome === 'abort') this.engine.abortRun(run, run.scripted?.result);
    else this.engine.startRun(run);
  }

  pause(): void {
    this.engine.pause(requireState(this.engine.run, 'pause'));
  }

  resume(): void {
    this.engine.resumeRunning(requireState(this.engine.run, 'resume'));
  }

  abort(): void {
    this.engine.abortRun(requireState(this.engine.run, 'abort'), 'Aborted');
  }

  cleanupUnloading(): void {
    const run = this.engine.run;
    if (!run) return;
    if (run.state !== 'Loading') throw new HttpProblem(409, `Cannot clean up while the run is ${run.state}.`);
    this.engine.finish(run, undefined);
  }

  /** POST /sim/run/error: raises a runtime error now (the run must be Running) or when step `atStep` starts. */
  injectError(seed: RunErrorSeed): { armed: boolean; error?: PendingError } {
    const run = this.engine.run;
    if (!run) throw new HttpProblem(409, 'No run is in progress.');
    if (armsForLater(run, seed.atStep)) {
      run.armedErrors.push(seed);
      return { armed: true };
    }
    if (run.state !== 'Running') throw new HttpProblem(409, `The run is ${run.state}, not Running.`);
    return { armed: false, error: this.engine.raise(run, seed) };
  }

  /** PUT /sim/run: speed, state format and scripted failures; answers the run status with them (GET /sim/run: {}). */
  configure(options: {
    simulationSpeed?: unknown;
    statesAsNames?: unknown;
    failCreate?: unknown;
    endNext?: unknown;
  }): Record<string, unknown> {
    if (options.simulationSpeed !== undefined) this.setSpeed(options.simulationSpeed);
    if (options.failCreate !== undefined) this.failNextCreates(options.failCreate);
    if (options.endNext !== undefined) this.endNext(options.endNext);
    if (options.statesAsNames !== undefined) {
      if (typeof options.statesAsNames !== 'boolean') throw new RangeError('statesAsNames must be a boolean');
      this.statesAsNames = options.statesAsNames;
    }
    return {
      ...this.status(),
      simulationSpeed: this.speed,
      statesAsNames: this.statesAsNames,
      records: this.records.all.length,
      transitions: [...this.transitions],
    };
  }

  /** After a restart of the simulator (whose stop() cleared every timer): plans the run's next transition again. */
  rearm(): void {
    this.engine.rearm();
  }
}
