/**
 * The fixtures of the lh-run start unit tests: a run status as the instrument serves it, a fake instrument
 * (RunControl) whose every call answers as an idle, valid, empty one unless a test says otherwise, and the start
 * options these tests share (no real sleeps, 1 ms polls).
 */
import { RUN_STATE_NAMES, RunStateName, RunStatus } from '../../src/client';
import { RunControl, StartOptions } from '../../src/nodes/lh-run/start-run';

/** The status of a run in `state` of protocol `protocolId` (named P<id>; null: no protocol, as at Idle). */
export function runStatus(state: RunStateName, protocolId: number | null = state === 'Idle' ? null : 1): RunStatus {
  return {
    protocolRunState: state,
    stateCode: RUN_STATE_NAMES.indexOf(state),
    isRunInProgress: state !== 'Idle',
    isSimulation: false,
    protocolId,
    protocolName: protocolId === null ? null : `P${protocolId}`,
    currentStep: null,
    startTime: null,
    estimatedEndTime: null,
  } as RunStatus;
}

type Calls = { [K in keyof RunControl]: (...args: never[]) => Promise<unknown> };

/** A fake instrument: idle, every protocol valid, create/load-complete accepted, no instructions, no run records; `calls` overrides. */
export function runControl(calls: Partial<Calls> = {}): RunControl {
  return {
    status: async () => runStatus('Idle'),
    protocolNames: async () => [],
    validateProtocol: async (id: unknown) => ({ protocolId: Number(id), isValid: true, validationErrors: [] }),
    createRun: async () => ({}),
    loadInstructions: async () => [],
    loadComplete: async () => ({}),
    listRunData: async () => [],
    ...calls,
  } as unknown as RunControl;
}

/** Start options of a plain start (no simulation, no stop or confirm at Loading, 1 ms polls, no real sleep); `extra` overrides. */
export function startOptions(extra: Partial<StartOptions> = {}): StartOptions {
  return {
    simulate: false,
    stopAtLoading: false,
    confirmLoading: false,
    pollMs: 1,
    timeoutMs: 10_000,
    sleep: async () => undefined,
    ...extra,
  };
}

/**
 * The two writes of a start, create (answered with `created`) and load-complete, each noted in `calls` as
 * `${prefix}create` / `${prefix}load-complete` when sent: runControl(notedWrites(calls)).
 */
export function notedWrites(calls: string[], created: unknown = {}, prefix = ''): Pick<Calls, 'createRun' | 'loadComplete'> {
  return {
    createRun: async () => {
      calls.push(`${prefix}create`);
      return created;
    },
    loadComplete: async () => {
      calls.push(`${prefix}load-complete`);
      return {};
    },
  };
}
