/**
 * Protocols, protocol runs and run records of interface A (beyond interfaces.md: see observed-instrument.md,
 * "Runs, live events, dialogs and run records"). Requests that move hardware (create, load-complete) are never
 * resent automatically and get long deadlines whatever the node timeout.
 */
import { LhError, validationError } from './errors';
import type { Sender } from './prep';
import { parseRunStatus, type RunStateName, runStateName, type RunStatus } from './run-state';
import type { UnsignedSpec } from './session';
import { type ApiResponse, checkRequestBody, MEDIA_JSON } from './transport';
import * as v from './validate';

type ASpec = Omit<UnsignedSpec, 'api'>;

/** A file of interface A (run report, pipetting CSV), as the bytes received. */
export interface FileDownload {
  data: Buffer;
  contentType: string;
  /** the file name the instrument suggests (Content-Disposition), if any */
  filename?: string;
}

/** Deadline of protocol-run/create: the instrument may take about 120 s to answer. */
export const CREATE_TIMEOUT_MS = 120_000;
/** Deadline of protocol-run/load-complete: the deck is checked and the run starts. */
export const LOAD_COMPLETE_TIMEOUT_MS = 120_000;

export interface ProtocolName {
  protocolId: number;
  name: string;
  isVisible?: boolean;
  [field: string]: unknown;
}

export interface ProtocolValidation {
  protocolId: number;
  isValid: boolean;
  validationErrors: string[];
  [field: string]: unknown;
}

export interface CreateRunOptions {
  protocolId: unknown;
  simulate?: unknown;
  recompile?: unknown;
}

export interface LoadCompleteOptions {
  protocolId: unknown;
  simulate?: unknown;
  /** fields over the defaults (residualTips, barcodes, liquidVolumes: empty lists; loadCompleteAction "Run") */
  overrides?: unknown;
}

export interface RunRecordSummary {
  id: string;
  protocolName?: string;
  startTime?: string;
  runResult?: string;
  userName?: string;
  [field: string]: unknown;
}

const RUN_ID = /^[A-Za-z0-9._~:-]{1,200}$/;

export function runId(value: unknown, field: string, operation: string): string {
  const text = typeof value === 'number' && Number.isInteger(value) && value >= 0 ? String(value) : value;
  // only dots would be a path segment of its own (`.`, `..`): refused like error ids, so the path cannot change
  if (typeof text !== 'string' || !RUN_ID.test(text) || /^\.+$/.test(text)) {
    throw validationError(
      operation,
      field,
      'must be a run record id: 1 to 200 letters, digits or . _ ~ : -, not only dots',
      value,
    );
  }
  return text;
}

export class RunsApi {
  /**
   * `readingStatus`: called as each status read starts; what it returns hears the state the read showed (the
   * instrument's run-start book forgets a run left at Loading that a read saw gone).
   */
  constructor(
    private readonly sendA: Sender,
    private readonly readingStatus?: () => (state: RunStateName) => void,
  ) {}

  private send<T>(spec: ASpec): Promise<ApiResponse<T>> {
    return this.sendA<T>({ ...spec, api: 'A' });
  }

  private async data<T>(spec: ASpec): Promise<T> {
    const res = await this.send<T>(spec);
    if (res.data === undefined || res.data === null) {
      throw new LhError(
        `${spec.operation}: the preparation service (A) answered ${res.status} without a body where JSON was expected`,
        {
          kind: 'response',
          operation: spec.operation,
          statusCode: res.status,
        },
      );
    }
    return res.data;
  }

  // --- protocols ---

  async protocolNames(): Promise<ProtocolName[]> {
    const op = 'protocol-names';
    const list = await this.data<unknown>({ method: 'GET', path: '/protocols/names', operation: op, idempotent: true });
    if (!Array.isArray(list))
      throw new LhError(`${op}: expected an array of protocols`, { kind: 'response', operation: op, body: list });
    return list.filter(
      (p): p is ProtocolName => v.isPlainObject(p) && typeof p.protocolId === 'number' && typeof p.name === 'string',
    );
  }

  getProtocol(protocolId: unknown, includeFullStepData?: unknown): Promise<Record<string, unknown>> {
    const op = 'get-protocol';
    return this.data({
      method: 'GET',
      path: `/protocols/${v.databaseId(protocolId, 'protocolId', op)}`,
      operation: op,
      query: { includeFullStepData: v.optionalBoolean(includeFullStepData, 'includeFullStepData', op) },
      idempotent: true,
    });
  }

  /** The instrument's verdict; a bare boolean answer is accepted too. */
  async validateProtocol(protocolId: unknown): Promise<ProtocolValidation> {
    const op = 'validate-protocol';
    const id = v.databaseId(protocolId, 'protocolId', op);
    const body = await this.data<unknown>({ method: 'GET', path: `/protocols/validate/${id}`, operation: op, idempotent: true });
    if (typeof body === 'boolean') return { protocolId: id, isValid: body, validationErrors: [] };
    if (!v.isPlainObject(body) || typeof body.isValid !== 'boolean') {
      throw new LhError(`${op}: expected {isValid, validationErrors} from the instrument`, {
        kind: 'response',
        operation: op,
        body,
      });
    }
    const errors = Array.isArray(body.validationErrors)
      ? body.validationErrors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))
      : [];
    return { ...body, protocolId: id, isValid: body.isValid, validationErrors: errors };
  }

  // --- protocol runs ---

  async status(): Promise<RunStatus> {
    const op = 'run-status';
    const seen = this.readingStatus?.();
    const body = await this.data<unknown>({
      method: 'GET',
      path: '/protocol-run',
      operation: op,
      idempotent: true,
      deepAnswer: 'cut',
    });
    let status: RunStatus;
    try {
      status = parseRunStatus(body);
    } catch (err) {
      throw new LhError(`${op}: ${(err as Error).message}`, { kind: 'response', operation: op, body });
    }
    seen?.(status.protocolRunState);
    return status;
  }

  /** Starts a run. Never resent automatically: a run moves hardware. */
  async createRun(options: CreateRunOptions): Promise<unknown> {
    const op = 'create-run';
    const body = {
      protocolId: v.databaseId(options.protocolId, 'protocolId', op),
      simulate: options.simulate === undefined ? false : v.strictBoolean(options.simulate, 'simulate', op),
      recompile: options.recompile === undefined ? false : v.strictBoolean(options.recompile, 'recompile', op),
    };
    const res = await this.send<unknown>({
      method: 'POST',
      path: '/protocol-run/create',
      operation: op,
      mediaType: MEDIA_JSON,
      body,
      idempotent: false,
      minTimeoutMs: CREATE_TIMEOUT_MS,
    });
    return res.data;
  }

  async loadInstructions(): Promise<unknown> {
    const res = await this.send<unknown>({
      method: 'GET',
      path: '/protocol-run/load-instructions',
      operation: 'load-instructions',
      idempotent: true,
    });
    return res.data ?? [];
  }

  /** Confirms the deck is loaded and starts the run. Never resent automatically. */
  async loadComplete(options: LoadCompleteOptions): Promise<Record<string, unknown>> {
    const body = loadCompleteBody(options);
    await this.send({
      method: 'PUT',
      path: '/protocol-run/load-complete',
      operation: 'load-complete',
      mediaType: MEDIA_JSON,
      body,
      idempotent: false,
      minTimeoutMs: LOAD_COMPLETE_TIMEOUT_MS,
    });
    return body;
  }

  pause(): Promise<void> {
    return this.control('pause', 'pause-run', ['Pausing', 'Paused']);
  }

  resume(): Promise<void> {
    return this.control('resume', 'resume-run', ['Running']);
  }

  abort(): Promise<void> {
    return this.control('abort', 'abort-run', ['Aborting', 'Idle']);
  }

  cleanupUnloading(): Promise<void> {
    return this.control('cleanup-unloading', 'cleanup-unloading', ['Idle']);
  }

  async globalRunState(): Promise<RunStateName | string> {
    const op = 'global-run-state';
    const body = await this.data<unknown>({
      method: 'GET',
      path: '/instruments/global-run-state',
      operation: op,
      idempotent: true,
      // observed as the JSON string "Idle"; a service that writes it as text/plain sends the bare word: a known state
      // name in any letter case is read, any other text is still refused
      bareWord: (text) => (/^[A-Za-z]+$/.test(text) ? runStateName(text) : undefined),
    });
    const name = runStateName(body);
    if (name) return name;
    if (typeof body === 'string') return body;
    throw new LhError(`${op}: expected a state name from the instrument`, { kind: 'response', operation: op, body });
  }

  /**
   * The simulation speed as the instrument gives it: text (the hardware-tested client types it as text), or the
   * text of the number an instrument sends as a JSON number.
   */
  async simulationSpeed(): Promise<string> {
    const op = 'get-simulation-speed';
    const body = await this.data<unknown>({
      method: 'GET',
      path: '/protocol-run/simulation-speed',
      operation: op,
      idempotent: true,
    });
    const raw = v.isPlainObject(body) ? (body.simulationSpeed ?? body.SimulationSpeed) : body;
    if (typeof raw === 'string' && raw.trim() !== '') return raw;
    if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
    throw new LhError(`${op}: expected the simulation speed from the instrument`, { kind: 'response', operation: op, body });
  }

  /** Sends the speed as text (`{simulationSpeed: "2"}`), as the hardware-tested client does; a number is sent as its text. */
  async setSimulationSpeed(speed: unknown): Promise<void> {
    const op = 'set-simulation-speed';
    const text =
      typeof speed === 'number' && Number.isFinite(speed) ? String(speed) : typeof speed === 'string' ? speed.trim() : '';
    if (!/^\d{1,9}(\.\d{1,9})?$/.test(text) || Number(text) <= 0) {
      throw validationError(op, 'simulationSpeed', 'must be a number greater than 0 (a number or its text)', speed);
    }
    await this.send({
      method: 'PUT',
      path: '/protocol-run/simulation-speed',
      operation: op,
      mediaType: MEDIA_JSON,
      body: { simulationSpeed: text },
      idempotent: true,
    });
  }

  // --- run records ---

  async listRunData(): Promise<RunRecordSummary[]> {
    const op = 'list-run-data';
    // an instrument without run records may answer null, or 204 (what ASP.NET makes of a null list), as the pending
    // errors of an instrument without errors: no records, not a wrong URL (a read of one record still wants a body)
    const list =
      (await this.send<unknown>({ method: 'GET', path: '/run-data', operation: op, idempotent: true, deepAnswer: 'cut' })).data ??
      [];
    if (!Array.isArray(list))
      throw new LhError(`${op}: expected an array of run records`, { kind: 'response', operation: op, body: list });
    return list
      .filter((r): r is Record<string, unknown> => v.isPlainObject(r) && (typeof r.id === 'string' || typeof r.id === 'number'))
      .map((r) => ({ ...r, id: String(r.id) }));
  }

  getRunData(id: unknown): Promise<Record<string, unknown>> {
    const op = 'get-run-data';
    return this.data({
      method: 'GET',
      path: `/run-data/${encodeURIComponent(runId(id, 'runId', op))}`,
      operation: op,
      idempotent: true,
    });
  }

  /** The run report as a PDF file. */
  async runReport(id: unknown): Promise<FileDownload> {
    const op = 'run-report';
    const rid = runId(id, 'runId', op);
    const file = await this.getFile(`/run-data/${encodeURIComponent(rid)}/pdf`, op, 'application/pdf');
    if (!file.data.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
      throw new LhError(`${op}: the instrument's answer is not a PDF file`, {
        kind: 'response',
        operation: op,
        body: file.data.subarray(0, 200).toString('utf8'),
      });
    }
    return { ...file, filename: file.filename ?? `run-${rid.replace(/[^\w.-]/g, '_')}.pdf` };
  }

  /** The run's pipetting record as a CSV file. */
  async pipettingCsv(id: unknown): Promise<FileDownload> {
    const op = 'pipetting-csv';
    const rid = runId(id, 'runId', op);
    const file = await this.getFile(`/run-data/${encodeURIComponent(rid)}/pipetting-csv`, op, 'text/csv');
    return { ...file, filename: file.filename ?? `pipetting-${rid.replace(/[^\w.-]/g, '_')}.csv` };
  }

  /** A file below A's API root, as bytes, through the session and transport like every other request. */
  private async getFile(path: string, operation: string, accept: string): Promise<FileDownload> {
    const res = await this.send<Buffer>({ method: 'GET', path, operation, idempotent: true, responseType: 'buffer', accept });
    const headers = res.headers ?? {};
    return {
      data: Buffer.isBuffer(res.data) ? res.data : Buffer.alloc(0),
      contentType: headers['content-type'] ?? '',
      filename: filenameOf(headers['content-disposition'] ?? ''),
    };
  }

  /**
   * A state-setting PUT, resent after a lost connection or a 5xx. The instrument refuses a resend with 409 once the
   * attempt before did the work (a pause sent again to a run already Pausing): such a 409 is read back, and the
   * request succeeds when the run status shows the action done (`done`); otherwise (or when the read fails) the 409 stands. (The audit trail
   * records the resend's 409 as the instrument gave it.)
   */
  private async control(action: string, op: string, done: readonly RunStateName[]): Promise<void> {
    try {
      await this.send({ method: 'PUT', path: `/protocol-run/${action}`, operation: op, idempotent: true });
    } catch (err) {
      if (!(err instanceof LhError) || err.statusCode !== 409 || (err.attempts ?? 1) <= 1) throw err;
      // the read back failing tells nothing: the instrument's refusal stands (its 409 and reason, not the read's failure)
      const status = await this.status().catch(() => undefined);
      if (!status || !done.includes(status.protocolRunState)) throw err;
    }
  }
}

/** `attachment; filename="run-1.pdf"` → run-1.pdf (path parts and quotes removed). */
export function filenameOf(disposition: string): string | undefined {
  const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
  let name = star ? safeDecode(star[1].trim()) : plain?.[1].trim();
  if (!name) return undefined;
  name = name.replace(/^.*[\\/]/, '').replace(/[^\w.\- ]/g, '_');
  return name === '' || name === '.' || name === '..' ? undefined : name;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/^"|"$/g, ''));
  } catch {
    return text;
  }
}

/**
 * Checks overrides of the load-complete body as its send would (the lists, then JSON values, prototype keys, size),
 * sending nothing: a start checks its msg.payload so before its first request, not after it created a run and left
 * it at Loading.
 */
export function checkLoadOverrides(overrides: unknown): void {
  checkRequestBody({ operation: 'load-complete', body: loadCompleteBody({ protocolId: 0, overrides }) });
}

/** The load-complete body: defaults with the overrides of msg.payload; protocolId and simulate are the run's. */
export function loadCompleteBody(options: LoadCompleteOptions): Record<string, unknown> {
  const op = 'load-complete';
  const overrides =
    options.overrides === undefined || options.overrides === null ? {} : v.plainObject(options.overrides, 'payload', op);
  for (const list of ['residualTips', 'barcodes', 'liquidVolumes']) {
    if (overrides[list] !== undefined && !Array.isArray(overrides[list]))
      throw validationError(op, `payload.${list}`, 'must be an array', overrides[list]);
  }
  const action = overrides.loadCompleteAction;
  if (action !== undefined && action !== 'Run') throw validationError(op, 'payload.loadCompleteAction', 'must be "Run"', action);
  return {
    residualTips: [],
    barcodes: [],
    liquidVolumes: [],
    ...overrides,
    protocolId: v.databaseId(options.protocolId, 'protocolId', op),
    simulate: options.simulate === undefined ? false : v.strictBoolean(options.simulate, 'simulate', op),
    loadCompleteAction: 'Run',
  };
}
