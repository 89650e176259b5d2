/**
 * The `start` operation of lh-run: validate, create, wait for Loading, confirm loading (or stop there for an
 * operator), wait for Running. No Node-RED here: the node passes the client and a sleep that its close cancels.
 */
import {
  checkLoadOverrides,
  CREATE_TIMEOUT_MS,
  type HeldClaim,
  isBusy,
  LhError,
  mapRunResult,
  neverReached,
  newRecords,
  type ProtocolName,
  type ProtocolValidation,
  type RunRecordSummary,
  type RunsApi,
  type RunStateName,
  type RunStatus,
  startBlockers,
  type StartReadiness,
} from '../../client';
import { type ProtocolRef, resolveProtocolName, withinSpan } from '../../client';
import { judgeStart, pathOf, see, type StartStage } from './start-decisions';

const OP = 'start-run';

export type RunControl = Pick<
  RunsApi,
  'status' | 'protocolNames' | 'validateProtocol' | 'createRun' | 'loadInstructions' | 'loadComplete' | 'listRunData'
>;

export type StartPhase = 'validating' | 'creating' | 'scheduling' | 'confirming' | 'starting';

export interface StartOptions {
  /** the protocol to run; may be left out when confirming a run stopped at Loading */
  protocol?: ProtocolRef;
  simulate: boolean;
  /**
   * the mode the dialog's Simulate or msg.simulate asks (undefined: neither asks one): a confirm of a run waiting at
   * Loading in the other mode is refused, nothing sent (a dry-run node never starts a real run left there)
   */
  simulateAsked?: boolean;
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
  /** system ready, controller and door, asked before anything that moves hardware is sent */
  readiness?(): Promise<StartReadiness>;
  /** takes the instrument's one start slot (throws `busy` while another start is in flight) */
  claim?(what: string): HeldClaim;
  /**
   * what this Node-RED remembers of the run it left at Loading on this instrument: `get` for a confirm, `set` when
   * a start stops at Loading, `forget` once it is confirmed, gone, or a new run is created. Without it (unit use)
   * a confirm is not checked against it.
   */
  loadingMemory?: {
    get(): { protocolId: number; runId?: string } | undefined;
    set(protocolId: number, runId?: string): void;
    forget(): void;
  };
  /** msg.runId with msg.confirmLoading: the run id the create answer gave to the run that was left at Loading */
  confirmRunId?: string;
  /** true once the node that runs this start was closed: nothing more is sent to the instrument */
  stopped?(): boolean;
}

/** Throws before a write when the node running the start was closed (redeployed or deleted) meanwhile. */
function refuseIfStopped(o: StartOptions, next: string): void {
  if (o.stopped?.()) {
    throw new LhError(`the lh-run node was stopped before ${next} was sent; nothing more is sent for this start`, {
      kind: 'config',
      operation: OP,
    });
  }
}

/** Refuses the start, before anything is sent, when the instrument says it is not ready, controlled elsewhere or open. */
async function refuseUnready(o: StartOptions): Promise<void> {
  if (!o.readiness) return;
  const readiness = await o.readiness();
  const reasons = startBlockers(readiness);
  if (reasons.length > 0) {
    throw new LhError(`start refused: ${reasons.join('; ')}`, {
      kind: 'instrument',
      operation: OP,
      statusCode: 409,
      body: readiness,
    });
  }
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
  /** the run record of a run that finished before a poll saw it running */
  runRecord?: RunRecordSummary;
}

/** The fields of msg.payload that load-complete takes; anything else in the payload (e.g. a LIMS request) is not sent. */
export const LOAD_FIELDS = ['residualTips', 'barcodes', 'liquidVolumes'] as const;

/**
 * Those fields of msg.payload, checked as load-complete will send them (each a list, JSON values, no prototype key,
 * under the body limit) before anything is sent: a start refused at load-complete had already created its run and
 * left it at Loading, holding the instrument.
 */
export function loadOverrides(payload: unknown): Record<string, unknown> | undefined {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of LOAD_FIELDS)
    if ((payload as Record<string, unknown>)[key] !== undefined) out[key] = (payload as Record<string, unknown>)[key];
  if (Object.keys(out).length === 0) return undefined;
  checkLoadOverrides(out);
  return out;
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

/**
 * Polls the status until the instrument shows this start's run at the awaited point (judgeStart decides); fails
 * naming what the instrument did otherwise, or at the timeout naming the state it stayed in.
 */
async function waitFor(
  api: RunControl,
  o: StartOptions,
  stage: StartStage,
  protocolId: number,
  seen: RunStateName[],
): Promise<{ status: RunStatus; verdict: 'loading' | 'started' | 'idle' }> {
  const what = stage === 'loading' ? 'Loading' : 'Running';
  let end = Date.now() + o.timeoutMs;
  for (;;) {
    // the wall clock set back meanwhile: the start would poll for the step's length before it says the run did not start
    end = withinSpan(end, Date.now(), o.timeoutMs);
    const status = await api.status();
    see(seen, status.protocolRunState);
    const verdict = judgeStart(stage, status, seen, protocolId);
    if (verdict.kind === 'failed') {
      throw new LhError(`the run did not start: ${verdict.reason}`, { kind: verdict.errorKind, operation: OP, body: status });
    }
    if (verdict.kind !== 'wait') return { status, verdict: verdict.kind };
    if (Date.now() >= end) {
      throw new LhError(
        `the run did not reach ${what} within ${Math.round(o.timeoutMs / 1000)} s (state ${status.protocolRunState}${seen.length > 0 ? `; seen ${pathOf(seen)}` : ''})`,
        { kind: 'timeout', operation: OP, body: status },
      );
    }
    await o.sleep(o.pollMs);
  }
}

/**
 * The run record of this start's run: the one with the run id the create answer gave, when it gave one (no other
 * record stands in for it); else the newest record of this protocol that the instrument did not list before
 * load-complete (`before`; undefined when that list could not be read: then no record counts). No time window:
 * a record's time stamp (the instrument's clock, zone-less dates) is no evidence of which run it belongs to.
 */
export function recordOfStart(
  records: RunRecordSummary[],
  protocolName: string,
  before: ReadonlySet<string> | undefined,
  runId?: string,
): RunRecordSummary | undefined {
  if (runId !== undefined) return records.find((r) => r.id === runId);
  if (!before) return undefined;
  return newRecords(records, before, protocolName)[0];
}

/** The ids of the run records the instrument lists now; undefined when it cannot tell. */
async function listedIds(api: RunControl): Promise<ReadonlySet<string> | undefined> {
  try {
    return new Set((await api.listRunData()).map((r) => r.id));
  } catch {
    return undefined;
  }
}

/** Starts a run (or confirms the loading of one), holding the instrument's one start slot throughout. */
export async function startRun(api: RunControl, o: StartOptions): Promise<StartResult> {
  const what = o.confirmLoading
    ? 'confirming the loading of a run'
    : o.protocol
      ? `protocol ${'id' in o.protocol ? o.protocol.id : `'${o.protocol.name}'`}`
      : 'a run';
  const held = o.claim?.(what);
  try {
    return await (o.confirmLoading ? confirm(api, o) : create(api, o, held));
  } finally {
    held?.release();
  }
}

async function create(api: RunControl, o: StartOptions, held: HeldClaim | undefined): Promise<StartResult> {
  if (!o.protocol)
    throw new LhError('a protocol is required to start a run', { kind: 'validation', operation: OP, field: 'protocolId' });
  o.onPhase?.('validating');
  // everything that can refuse the start is asked before create is sent
  const current = await api.status();
  if (isBusy(current)) {
    throw new LhError(`start refused: ${describeRun(current)}; wait for it to finish or abort it`, {
      kind: 'busy',
      operation: OP,
      statusCode: 409,
      body: current,
    });
  }
  held?.refuseWhileCreateUnanswered(); // Idle, but an earlier create that got no answer may still make its run
  await refuseUnready(o);
  const protocol = await protocolOf(api, o.protocol);
  const validation: ProtocolValidation = await api.validateProtocol(protocol.protocolId);
  if (!validation.isValid) {
    throw new LhError(
      `protocol ${protocol.protocolId} is not valid: ${validation.validationErrors.join(' ') || 'the instrument gives no reason'}`,
      { kind: 'validation', operation: OP, field: 'protocolId', body: validation },
    );
  }
  o.onPhase?.('creating');
  refuseIfStopped(o, 'create');
  o.loadingMemory?.forget(); // whatever was left at Loading before, this create replaces it
  held?.sendingCreate();
  let created: unknown;
  try {
    created = await api.createRun({ protocolId: protocol.protocolId, simulate: o.simulate, recompile: false });
  } catch (err) {
    // no answer (closed by a redeploy, lost, the deadline): the instrument may still be creating the run, showing
    // Idle meanwhile; no other start of this Node-RED sends a create until it shows a run or CREATE_TIMEOUT_MS passed.
    // A create that never left (no connection made) holds nothing: the next start may send its own at once
    if (err instanceof LhError && (err.kind === 'network' || err.kind === 'timeout') && !neverReached(err)) {
      held?.createUnanswered(CREATE_TIMEOUT_MS);
    }
    throw err;
  }
  const runId = runIdOf(created);
  o.onPhase?.('scheduling');
  const seen: RunStateName[] = [];
  const { status: loading, verdict } = await waitFor(api, o, 'loading', protocol.protocolId, seen);
  const name = loading.protocolName ?? ('name' in protocol && protocol.name ? protocol.name : '');
  if (verdict === 'started') {
    return { outcome: 'started', status: loading, protocolId: protocol.protocolId, protocolName: name, runId };
  }
  if (o.stopAtLoading) {
    refuseIfStopped(o, 'the load-instructions read');
    const loadInstructions = await api.loadInstructions();
    o.loadingMemory?.set(protocol.protocolId, runId);
    return { outcome: 'loading', status: loading, protocolId: protocol.protocolId, protocolName: name, runId, loadInstructions };
  }
  return loadAndRun(api, o, protocol.protocolId, name, runId, seen);
}

async function confirm(api: RunControl, o: StartOptions): Promise<StartResult> {
  const status = await api.status();
  if (status.protocolRunState !== 'Loading' || status.protocolId === null) {
    if (status.protocolRunState !== 'Loading') o.loadingMemory?.forget(); // the run left there is gone
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
  refuseForeignLoading(o, status);
  if (o.simulateAsked !== undefined && o.simulateAsked !== status.isSimulation) {
    const waiting = status.isSimulation ? 'a simulated run' : 'a real run (hardware moves)';
    const asked = o.simulateAsked ? 'a simulation' : 'a real run';
    throw new LhError(
      `msg.confirmLoading: the run waiting at Loading is ${waiting}, but this start asks for ${asked} (the dialog's ` +
        'Simulate, or msg.simulate): nothing was sent; confirm it from a node that asks for its mode, or abort it',
      { kind: 'validation', operation: OP, field: 'simulate', body: status },
    );
  }
  await refuseUnready(o);
  o.loadingMemory?.forget(); // load-complete is sent for it below: it no longer waits for a confirm
  return loadAndRun(api, { ...o, simulate: status.isSimulation }, status.protocolId, status.protocolName ?? '', undefined, [
    'Loading',
  ]);
}

/**
 * Refuses to confirm a run this Node-RED did not leave at Loading: one an operator prepared at the instrument's
 * screen, another Node-RED's, or one left there before a restart of this Node-RED. load-complete would start it on
 * a deck nobody here was asked to load. With msg.runId, the run left at Loading must have that run id too.
 */
function refuseForeignLoading(o: StartOptions, status: RunStatus): void {
  if (!o.loadingMemory) return;
  const left = o.loadingMemory.get();
  const waiting = `the run waiting at Loading (protocol ${status.protocolId})`;
  if (!left || left.protocolId !== status.protocolId) {
    throw new LhError(
      `msg.confirmLoading: ${waiting} was not left there by a start of this Node-RED (Stop at loading); confirm it at the instrument, or abort it`,
      { kind: 'validation', operation: OP, field: 'confirmLoading', body: status },
    );
  }
  if (o.confirmRunId !== undefined && o.confirmRunId !== left.runId) {
    throw new LhError(
      `msg.runId: ${waiting} is ${left.runId === undefined ? 'a run whose id the instrument did not give' : `run ${left.runId}`}, not ${o.confirmRunId}`,
      { kind: 'validation', operation: OP, field: 'runId', body: status },
    );
  }
}

async function loadAndRun(
  api: RunControl,
  o: StartOptions,
  protocolId: number,
  name: string,
  runId: string | undefined,
  seen: RunStateName[],
): Promise<StartResult> {
  o.onPhase?.('confirming');
  // the records listed now are not this run's: only a record new after load-complete can tell that it ran
  const before = runId === undefined ? await listedIds(api) : undefined;
  refuseIfStopped(o, 'load-complete');
  await api.loadComplete({ protocolId, simulate: o.simulate, overrides: o.loadOverrides });
  o.onPhase?.('starting');
  const { status, verdict } = await waitFor(api, o, 'running', protocolId, seen);
  const protocolName = status.protocolName ?? name;
  if (verdict === 'started') return { outcome: 'started', status, protocolId, protocolName, runId };
  return endedAtOnce(api, status, protocolId, protocolName, runId, before);
}

/**
 * Idle right after load-complete: the run either finished between two polls or never started (a failed deck check,
 * an operator's cancel). Its run record tells which: only a result word known to mean completed counts as started.
 */
async function endedAtOnce(
  api: RunControl,
  status: RunStatus,
  protocolId: number,
  protocolName: string,
  runId: string | undefined,
  before: ReadonlySet<string> | undefined,
): Promise<StartResult> {
  const record = recordOfStart(await api.listRunData(), protocolName, before, runId);
  const mapped = record ? mapRunResult(record.runResult) : undefined;
  if (record && mapped?.result === 'completed') {
    return { outcome: 'started', status, protocolId, protocolName, runId: runId ?? record.id, runRecord: record };
  }
  const said = record
    ? `its run record ${record.id} says ${mapped?.resultText === null || mapped === undefined ? 'no result' : JSON.stringify(mapped.resultText)}`
    : runId === undefined && !before
      ? 'its run records could not be read before load-complete, so no record can show that it ran'
      : 'the instrument lists no run record of it';
  throw new LhError(`the run did not start: the instrument went back to Idle after load-complete, and ${said}`, {
    kind: 'instrument',
    operation: OP,
    body: { status, runRecord: record ?? null },
  });
}
