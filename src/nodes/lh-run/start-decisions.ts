/**
 * What one run status, read while a start waits, says about the run this start created. Pure: no I/O, no timers.
 *
 * `started` needs evidence from the instrument that this start's run got past Loading and was running: a status
 * of Running, Pausing or Paused of the protocol this start created. Anything else is not a start: a run that goes
 * Scheduling → Aborting → Idle, or Loading → Aborting after load-complete (a failed deck check), fails naming the
 * states seen; Idle after load-complete is left to the caller, which reads the run record (a run may finish between
 * two reads); a run of another protocol means this start's run is not the one on the instrument. Every failure
 * judged here comes after create was sent, so its kind is `instrument`, never `busy` (which says nothing was sent).
 */
import type { RunStateName, RunStatus } from '../../client';

/** `loading`: create was sent, Loading is awaited; `running`: load-complete was sent, Running is awaited. */
export type StartStage = 'loading' | 'running';

export type StartVerdict =
  | { kind: 'wait' }
  /** Loading reached (stage `loading` only) */
  | { kind: 'loading' }
  /** the instrument shows this start's run running */
  | { kind: 'started' }
  /** back to Idle after load-complete: the run record tells whether it ran */
  | { kind: 'idle' }
  /** always kind `instrument`: create was sent by then, so `busy` ("nothing was sent, try later") would be untrue */
  | { kind: 'failed'; errorKind: 'instrument'; reason: string };

/** States that show a run running (pausing and paused come only from Running). */
export const RUNNING_STATES: readonly RunStateName[] = ['Running', 'Pausing', 'Paused'];

/** The states seen so far, in order, without repeats: "Scheduling → Aborting". */
export function pathOf(seen: readonly RunStateName[]): string {
  return seen.join(' → ');
}

/** Appends a state to the path seen (no repeats; Idle before the run shows is not part of its path). */
export function see(seen: RunStateName[], state: RunStateName): void {
  if (seen.length === 0 && state === 'Idle') return;
  if (seen[seen.length - 1] !== state) seen.push(state);
}

/**
 * Judges one status. `seen` is the path seen since create (including this status's state); `protocolId` the
 * protocol this start created a run of.
 */
export function judgeStart(
  stage: StartStage,
  status: RunStatus,
  seen: readonly RunStateName[],
  protocolId: number,
): StartVerdict {
  const state = status.protocolRunState;
  if (state !== 'Idle' && status.protocolId !== null && status.protocolId !== protocolId) {
    return {
      kind: 'failed',
      errorKind: 'instrument',
      reason: `the instrument shows a run of protocol ${status.protocolId} (${state}), not of protocol ${protocolId} that this start created`,
    };
  }
  if (RUNNING_STATES.includes(state)) return { kind: 'started' };
  const path = pathOf(seen);
  if (state === 'Aborting') {
    return {
      kind: 'failed',
      errorKind: 'instrument',
      reason:
        stage === 'loading'
          ? `the run was aborted before it reached Loading (${path})`
          : `the run was aborted after load-complete before it was seen running (${path})`,
    };
  }
  if (stage === 'loading') {
    if (state === 'Loading') return { kind: 'loading' };
    if (state === 'Idle' && seen.some((s) => s !== 'Idle')) {
      return { kind: 'failed', errorKind: 'instrument', reason: `the run ended before it reached Loading (${path})` };
    }
    return { kind: 'wait' }; // Idle before the run shows, Scheduling, Scheduled, ErrorHandling, Reloading
  }
  if (state === 'Idle') return { kind: 'idle' };
  if (state === 'Scheduling' || state === 'Scheduled') {
    return {
      kind: 'failed',
      errorKind: 'instrument',
      reason: `after load-complete the instrument shows a run being scheduled (${path}): this start's run was not seen running`,
    };
  }
  return { kind: 'wait' }; // Loading (the deck check), ErrorHandling and Reloading until answered
}
