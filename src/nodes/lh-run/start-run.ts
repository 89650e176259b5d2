/**
 * The `start` operation of lh-run: validate, create, wait for Loading, confirm loading (or stop there for an
 * operator), wait for Running. No Node-RED here: the node passes the client and a sleep that its close cancels.
 */
import { LhError, ProtocolName, ProtocolValidation, RunsApi, RunStateName, RunStatus, isBusy } from '../../client';
import { ProtocolRef, resolveProtocolName } from './protocol-ref';

const OP = 'start-run';

export type RunControl = Pick<RunsApi, 'status' | 'protocolNames' | 'validateProtocol' | 'createRun' | 'loadInstructions' | 'loadComplete'>;

export type StartPhase = 'validating' | 'creating' | 'scheduling' | 'confirming' | 'starting';

export interface StartOptions {
  /** the protocol to run; may be left out when confirming a run stopped at Loading */
  protocol?: ProtocolRef;
  simulate: boolean;
  /** stop at Loading and output the load instructions instead of confirming the loading */
  stopAtLoading: boolean;
  /** confirm the loading of a run that stopped at Loading (msg.confirmLoading) */
  confirmLoading: boolean;
  /** residualTips, barcodes, liquidVolumes for load-complete */
  loadOverrides?: Record<string, unknown>;
  pollMs: number;
  /** how long to wait for Loading, and again for Running */
  timeoutMs: number;
  sleep(ms: number): Promise<void>;
  onPhase?(phase: StartPhase): void;
}

export interface StartResult {
  /** 'loading': stopped at Loading for an operator; 'started': the run is running (or already further) */
  outcome: 'loading' | 'started';
  status: RunStatus;
  protocolId: number;
  protocolName: string;
  /** the run id, when the instrument's create answer gives one */
  runId?: string;
  loadInstructions?: unknown;
}

/** The fields of msg.payload that load-complete takes; anything else in the payload (e.g. a LIMS request) is not sent. */
export const LOAD_FIELDS = ['residualTips', 'barcodes', 'liquidVolumes'] as const;

export function loadOverrides(payload: unknown): Record<string, unknown> | undefined {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of LOAD_FIELDS) if ((payload as Record<string, unknown>)[key] !== undefined) out[key] = (payload as Record<string, unknown>)[key];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** "a run of protocol 'Demo' (1) is in progress (Running)" */
export function describeRun(status: RunStatus): string {
  const name = status.protocolName ? `'${status.protocolName}'` : 'unknown';
  const id = status.protocolId !== null ? ` (${status.protocolId})` : '';
  return `a run of protocol ${name}${id} is in progress (${status.protocolRunState})`;
}

export function runIdOf(created: unknown): string | undefined {
  if (!created || typeof created !== 'object') return undefined;
  const o = created as Record<string, unknown>;
  const id = o.runId ?? o.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

async function protocolOf(api: RunControl, ref: ProtocolRef): Promise<ProtocolName | { protocolId: number; name?: string }> {
  if ('name' in ref) return resolveProtocolName(ref.name, await api.protocolNames(), OP);
  return { protocolId: ref.id };
}

const BEFORE_LOADING: RunStateName[] = ['Scheduling', 'Scheduled'];

/**
 * Polls the status until `done` holds. Idle after a run was seen means the run ended (or was cancelled):
 * `idleIsDone` decides whether that counts as done or fails.
 */
async function waitFor(
  api: RunControl,
  o: StartOptions,
  what: string,
  done: (s: RunStateName) => boolean,
  idleIsDone: boolean,
): Promise<RunStatus> {
  const end = Date.now() + o.timeoutMs;
  // after load-complete the run exists: an Idle then is a run that already ended
  let seenRun = idleIsDone;
  for (;;) {
    const status = await api.status();
    const state = status.protocolRunState;
    if (done(state)) return status;
    if (state === 'Idle' && seenRun) {
      if (idleIsDone) return status;
      throw new LhError(`the run ended before it reached ${what}`, { kind: 'instrument', operation: OP, body: status });
    }
    if (state !== 'Idle') seenRun = true;
    if (Date.now() >= end) {
      throw new LhError(`the run did not reach ${what} within ${Math.round(o.timeoutMs / 1000)} s (state ${state})`, {
        kind: 'timeout',
        operation: OP,
        body: status,
      });
    }
    await o.sleep(o.pollMs);
  }
}

export async function startRun(api: RunControl, o: StartOptions): Promise<StartResult> {
  if (o.confirmLoading) return confirm(api, o);
  if (!o.protocol) throw new LhError('a protocol is required to start a run', { kind: 'validation', operation: OP, field: 'protocolId' });
  o.onPhase?.('validating');
  // everything that can refuse the start is asked before create is sent
  const current = await api.status();
  if (isBusy(current)) {
    throw new LhError(`start refused: ${describeRun(current)}; wait for it to finish or abort it`, {
      kind: 'instrument',
      operation: OP,
      statusCode: 409,
      body: current,
    });
  }
  const protocol = await protocolOf(api, o.protocol);
  const validation: ProtocolValidation = await api.validateProtocol(protocol.protocolId);
  if (!validation.isValid) {
    throw new LhError(
      `protocol ${protocol.protocolId} is not valid: ${validation.validationErrors.join(' ') || 'the instrument gives no reason'}`,
      { kind: 'validation', operation: OP, field: 'protocolId', body: validation },
    );
  }
  o.onPhase?.('creating');
  const created = await api.createRun({ protocolId: protocol.protocolId, simulate: o.simulate, recompile: false });
  const runId = runIdOf(created);
  o.onPhase?.('scheduling');
  const loading = await waitFor(api, o, 'Loading', (s) => s !== 'Idle' && !BEFORE_LOADING.includes(s), false);
  const name = loading.protocolName ?? ('name' in protocol && protocol.name ? protocol.name : '');
  if (loading.protocolRunState !== 'Loading') {
    return { outcome: 'started', status: loading, protocolId: protocol.protocolId, protocolName: name, runId };
  }
  if (o.stopAtLoading) {
    const loadInstructions = await api.loadInstructions();
    return { outcome: 'loading', status: loading, protocolId: protocol.protocolId, protocolName: name, runId, loadInstructions };
  }
  return loadAndRun(api, o, protocol.protocolId, name, runId);
}

async function confirm(api: RunControl, o: StartOptions): Promise<StartResult> {
  const status = await api.status();
  if (status.protocolRunState !== 'Loading' || status.protocolId === null) {
    throw new LhError(`msg.confirmLoading: no run is waiting at Loading (state ${status.protocolRunState})`, {
      kind: 'validation',
      operation: OP,
      field: 'confirmLoading',
      body: status,
    });
  }
  if (o.protocol) {
    const wanted = await protocolOf(api, o.protocol);
    if (wanted.protocolId !== status.protocolId) {
      throw new LhError(
        `msg.confirmLoading: the run waiting at Loading is protocol ${status.protocolId}, not ${wanted.protocolId}`,
        { kind: 'validation', operation: OP, field: 'protocolId', body: status },
      );
    }
  }
  return loadAndRun(api, { ...o, simulate: status.isSimulation }, status.protocolId, status.protocolName ?? '', undefined);
}

async function loadAndRun(api: RunControl, o: StartOptions, protocolId: number, name: string, runId: string | undefined): Promise<StartResult> {
  o.onPhase?.('confirming');
  await api.loadComplete({ protocolId, simulate: o.simulate, overrides: o.loadOverrides });
  o.onPhase?.('starting');
  const status = await waitFor(api, o, 'Running', (s) => s !== 'Loading' && s !== 'Idle' && !BEFORE_LOADING.includes(s), true);
  return { outcome: 'started', status, protocolId, protocolName: status.protocolName ?? name, runId };
}
