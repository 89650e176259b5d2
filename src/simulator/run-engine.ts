/**
 * The active run moving through time: the engine applies the decisions of run-transitions.ts with the injected
 * clock (the simulator's timers: stop() clears them, rearm() plans them again after a restart), books simulated
 * time into the running step, raises armed errors, sends the live events and writes the run record at the end.
 *
 * Each step takes its `duration` field (seconds) or DEFAULT_STEP_SECONDS of simulated time; real time is
 * simulated time divided by the simulation speed.
 *
 * Live events go out through `events` (the simulator sends them on `instinctevents`): `RunStatus` on every state
 * change (data: the run status as GET protocol-run serves it), `TimeRemaining` whenever a running segment is
 * planned (a step starts, the run resumes, the speed changes: at most once per step segment), `Finished` when a
 * run ends (data: result, run record id, protocol, times).
 */
import { RunRecordBook, type RunResult } from './run-records';
import {
  type ActiveRun,
  armedErrorIndex,
  iso,
  phaseAfterEntering,
  type PhaseEnd,
  rearmPlan,
  remainingAfterCheckpoint,
  resultAtEnd,
  type RunErrorSeed,
  type RunStateName,
} from './run-transitions';
import { finishedEvent, runRecordOf, type RunStatus, runStatus, type RunView, timeRemainingEvent } from './run-views';
import type { RuntimeErrorBook } from './runtime-errors';
import type { PendingError } from './types';

export interface RunClock {
  now(): number;
  /** Runs fn after ms; the returned function cancels it. */
  schedule(ms: number, fn: () => void): () => void;
}

/** Receives the run's live events (code, description, data); the simulator publishes them on `instinctevents`. */
export type RunEventSink = (code: RunEventCode, description: string, data: Record<string, unknown>) => void;
export type RunEventCode = 'RunStatus' | 'TimeRemaining' | 'Finished';

/** Bound of `transitions`. */
const MAX_TRANSITIONS = 1000;

export class RunEngine {
  readonly records = new RunRecordBook();
  /** every state entered, for tests and /sim/run (bounded) */
  readonly transitions: { state: RunStateName; at: number }[] = [];
  private active?: ActiveRun;

  constructor(
    private readonly clock: RunClock,
    private readonly events: RunEventSink,
    private readonly errors: RuntimeErrorBook,
    /** simulated seconds per real second */
    public speed: number,
    public statesAsNames: boolean,
  ) {}

  get run(): ActiveRun | undefined {
    return this.active;
  }

  status(): RunStatus {
    return runStatus(this.active, this.view());
  }

  /** No run, no records, no transitions. */
  reset(): void {
    this.active?.cancel?.();
    this.active = undefined;
    this.records.clear();
    this.transitions.length = 0;
  }

  /** A new run enters Scheduling and goes on by itself to Loading (or to its scripted abort). */
  begin(run: ActiveRun): void {
    this.active = run;
    this.enter(run, 'Scheduling');
    this.plan(run, phaseAfterEntering('Scheduling', run.scripted));
  }

  /** load-complete: the first step starts. */
  startRun(run: ActiveRun): void {
    run.startTime = this.clock.now();
    this.startStep(run);
  }

  pause(run: ActiveRun): void {
    this.checkpoint(run);
    this.enter(run, 'Pausing');
    this.plan(run, phaseAfterEntering('Pausing'));
  }

  /** The running step goes on (resume, or an error answered with anything but Abort). */
  resumeRunning(run: ActiveRun): void {
    run.cancel?.();
    run.cancel = undefined;
    this.enter(run, 'Running');
    this.scheduleStepEnd(run);
  }

  /** Aborting, then Idle; `result` undefined: no record. */
  abortRun(run: ActiveRun, result: RunResult | undefined): void {
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
  finish(run: ActiveRun, result: RunResult | undefined): void {
    run.cancel?.();
    run.cancel = undefined;
    if (result !== undefined) this.records.add(runRecordOf(run, result, this.clock.now()));
    this.active = undefined;
    this.record('Idle');
    this.publishStatus();
    const { description, data } = finishedEvent(run, result, this.clock.now());
    this.events('Finished', description, data);
  }

  /** A runtime error in the running step: ErrorHandling until it is answered. */
  raise(run: ActiveRun, seed: RunErrorSeed): PendingError {
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

  /** Called when any runtime error gets handled (answered, resolved or cleared). */
  errorHandled(error: PendingError): void {
    const run = this.active;
    if (!run || run.pendingErrorId !== error.id) return;
    run.pendingErrorId = undefined;
    const entry = run.errorLog.find((e) => e.id === error.id);
    if (entry) entry.selectedResponse = error.selectedResponse;
    if (error.selectedResponse === 'Abort') this.abortRun(run, 'Failed');
    else if (run.state === 'ErrorHandling') this.resumeRunning(run);
  }

  /** A new speed; a running step keeps the simulated time it has run. */
  setSpeed(next: number): void {
    const run = this.active;
    if (run && run.state === 'Running') this.checkpoint(run);
    this.speed = next;
    if (run && run.state === 'Running') this.scheduleStepEnd(run);
  }

  /** After a restart of the simulator (whose stop() cleared every timer): plans the run's next transition again. */
  rearm(): void {
    const run = this.active;
    if (!run) return;
    const plan = rearmPlan(run.state);
    if (plan === 'step') {
      this.checkpoint(run);
      this.scheduleStepEnd(run);
    } else if (plan) {
      this.plan(run, plan);
    }
  }

  // ---- internals --------------------------------------------------------------------------------

  private view(): RunView {
    return { now: this.clock.now(), speed: this.speed, statesAsNames: this.statesAsNames };
  }

  private record(state: RunStateName): void {
    this.transitions.push({ state, at: this.clock.now() });
    if (this.transitions.length > MAX_TRANSITIONS) this.transitions.shift();
  }

  private enter(run: ActiveRun, state: RunStateName): void {
    if (this.active !== run || run.state === state) return;
    run.state = state;
    this.record(state);
    this.publishStatus();
  }

  private publishStatus(): void {
    const status = this.status();
    this.events('RunStatus', `Run state ${this.active?.state ?? 'Idle'}`, { ...status });
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
    const cancel = this.clock.schedule((simSeconds * 1000) / this.speed, () => {
      if (run.cancel === cancel) run.cancel = undefined;
      if (this.active === run) fn();
    });
    run.cancel = cancel;
  }

  /** Books the simulated time run so far into the running step. */
  private checkpoint(run: ActiveRun): void {
    if (run.segmentStart === undefined) return;
    run.remaining = remainingAfterCheckpoint(run, this.clock.now(), this.speed);
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
}
