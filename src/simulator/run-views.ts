/**
 * What a run looks like from outside, as pure functions: GET protocol-run, the live events (RunStatus,
 * TimeRemaining, Finished), the run record a finished run leaves, the load instructions, and the protocol reads.
 */
import { isObject } from './json-fields';
import type { RunRecord, RunResult } from './run-records';
import {
  type ActiveRun,
  iso,
  NOT_SET,
  remainingSeconds,
  RUN_STATES,
  type RunStateName,
  validationErrors,
} from './run-transitions';
import type { Protocol } from './types';

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

/** How the machine serves things at this moment. */
export interface RunView {
  now: number;
  speed: number;
  statesAsNames: boolean;
}

/** A run state as the wire carries it: its index, or its name when states are served as names. */
export function stateOnWire(state: RunStateName, statesAsNames: boolean): number | RunStateName {
  return statesAsNames ? state : RUN_STATES.indexOf(state);
}

/** GET protocol-run (no run: Idle and "not set" dates). */
export function runStatus(run: ActiveRun | undefined, view: RunView): RunStatus {
  const state = run?.state ?? 'Idle';
  const step = run && run.startTime !== undefined ? run.steps[run.index] : undefined;
  const started = run?.startTime !== undefined;
  return {
    protocolRunState: stateOnWire(state, view.statesAsNames),
    isRunInProgress: run !== undefined,
    isSimulation: run?.simulate ?? false,
    protocolId: run?.protocolId ?? 0,
    protocolName: run?.protocolName ?? '',
    currentStep: step?.name ?? '',
    currentStepNumber: step ? run!.index + 1 : 0,
    stepCount: run?.steps.length ?? 0,
    startTime: started ? iso(run.startTime!) : NOT_SET,
    estimatedEndTime: started ? iso(view.now + (remainingSeconds(run, view.now, view.speed) * 1000) / view.speed) : NOT_SET,
  };
}

/** The TimeRemaining event: description and data. */
export function timeRemainingEvent(run: ActiveRun, view: RunView): { description: string; data: Record<string, unknown> } {
  const status = runStatus(run, view);
  const left = remainingSeconds(run, view.now, view.speed);
  return {
    description: `${Math.round(left / view.speed)} s remaining`,
    data: {
      timeRemaining: Math.round((left * 1000) / view.speed) / 1000,
      estimatedEndTime: status.estimatedEndTime,
      protocolId: run.protocolId,
      protocolName: run.protocolName,
      currentStep: status.currentStep,
      currentStepNumber: status.currentStepNumber,
      stepCount: status.stepCount,
    },
  };
}

/** The Finished event (result undefined: cancelled before it started). */
export function finishedEvent(
  run: ActiveRun,
  result: RunResult | undefined,
  now: number,
): { description: string; data: Record<string, unknown> } {
  return {
    description: `Run of '${run.protocolName}' ${result ?? 'Cancelled'}`,
    data: {
      result: result ?? 'Cancelled',
      runRecordId: result !== undefined ? run.runId : null,
      runId: run.runId,
      protocolId: run.protocolId,
      protocolName: run.protocolName,
      isSimulation: run.simulate,
      startTime: run.startTime !== undefined ? iso(run.startTime) : NOT_SET,
      endTime: iso(now),
    },
  };
}

/** The record a run ending at `now` with `result` leaves; steps that never started are NotRun. */
export function runRecordOf(run: ActiveRun, result: RunResult, now: number): RunRecord {
  const end = iso(now);
  return {
    id: run.runId,
    protocolId: run.protocolId,
    protocolName: run.protocolName,
    startTime: iso(run.startTime ?? now),
    endTime: end,
    runResult: result,
    userName: run.userName,
    isSimulation: run.simulate,
    steps: run.steps.map(
      (s) => s.log ?? { name: s.name, stepType: s.stepType, startTime: end, endTime: null, status: 'NotRun', fields: s.fields },
    ),
    errors: run.errorLog.map((e) => ({ ...e })),
  };
}

/** GET protocol-run/load-instructions: tips, then the labware each step's destinations and plate position need. */
export function loadInstructionsOf(run: ActiveRun): Record<string, unknown>[] {
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

/** GET protocols/{id}: validity and the steps, in full or as summaries. */
export function protocolView(p: Protocol, full: boolean): Record<string, unknown> {
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
