/**
 * The /sim control API: plain JSON over HTTP on the A port, not under the A prefix, no auth, no faults,
 * not logged. It lets flows and tests drive the simulator from outside the process.
 *
 *   POST   /sim/errors                         Partial<PendingErrorSeed> → 201 created pending error
 *   POST   /sim/errors/{id}/resolve            → 204, as if the operator answered on the instrument
 *   POST   /sim/instrument-errors              Partial<InstrumentErrorSeed> → 201 created instrument error
 *   POST   /sim/instrument-errors/{uuid}/resolve → 204, the default action ran on the instrument
 *   POST   /sim/protocols                      {name?} → 201 {id}
 *   PUT    /sim/faults  (Faults) → 200 the faults now active;  DELETE /sim/faults → 204;  GET /sim/faults
 *   GET    /sim/requests → logged A/B requests;  DELETE /sim/requests → 204
 *   POST   /sim/reset → 204;  POST /sim/restart {downtimeMs} → 202, restarts after answering
 *   GET    /sim/state → summary counts
 *   POST   /sim/events {code, description?, data?, channel?: 'events'|'errors'} → 202 {sent}: pushes one event
 *   POST   /sim/message-box {title?, text?, buttons?} → 201 the box {viewId, ...}, pushed as a messagebox event
 *   GET    /sim/views → {open, closed}: message boxes still open, and how they were closed
 *   POST   /sim/firmware-error {id?, title?, message?, severity?, responses?} → 201, pushed on instincterrors only
 *   POST   /sim/firmware-error/{id}/resolve → 204, the resolution pushed on instincterrors
 *          (a firmware error is also answered with PUT errors/runtime {id, selectedResponse}, as an A error)
 *   POST   /sim/event-sockets/drop → 200 {dropped}: drops every websocket connection
 *   GET    /sim/run → the run status, speed and format;  PUT /sim/run {simulationSpeed?, statesAsNames?, failCreate?, endNext?} → 200
 *          the same; failCreate {status?, reset?, count?}: the next creates fail (nothing created) with that status or a reset;
 *          endNext {at: 'scheduling'|'deck-check'|'end', result?}: the next run is aborted while Scheduling, aborted at the
 *          deck check after load-complete, or ends with a run record saying `result` (any words)
 *   GET    /sim/machine;  PUT /sim/machine {isDoorClosed?, isControlled?, controllerMachineName?, controllerUserName?,
 *          isServerReady?, stoppedServices?, instrumentName?, serialNumber?, isEnclosurePresent?, offered?} → 200 the state:
 *          what system-ready, instruments, connection-status, sensor-status and software-versions answer
 *   GET    /sim/deck;  PUT /sim/deck {camera?, cameraNotImage?, cameraRefuses?, initialized?} → 200: the camera offered
 *          (false: 404), answering text instead of an image, answering 401 whatever the token, the instrument initialised
 *   POST   /sim/run/error {title?, message?, responses?, atStep?} → 201 {armed, error?}: a runtime error during the
 *          run, now (ErrorHandling until answered) or when step atStep starts
 */
import type { FirmwareError } from './error-pushes';
import { isObject } from './json-fields';
import type { MachineState } from './machine-status';
import type { MessageBox } from './message-boxes';
import { problem } from './problem';
import type { Reply } from './router';
import type { RunErrorSeed } from './run-machine';
import type { Faults, InstrumentError, InstrumentErrorSeed, LoggedRequest, PendingError, PendingErrorSeed } from './types';

export interface ControlTarget {
  injectPendingError(seed?: Partial<PendingErrorSeed>): PendingError;
  injectInstrumentError(seed?: Partial<InstrumentErrorSeed>): InstrumentError;
  resolvePendingError(id: string): void;
  resolveInstrumentError(uuid: string): void;
  addProtocol(name?: string): number;
  setFaults(f: Faults): void;
  clearFaults(): void;
  readonly faults: Faults;
  readonly requests: LoggedRequest[];
  clearRequests(): void;
  reset(): void;
  restart(downtimeMs?: number): Promise<void>;
  summary(): Record<string, unknown>;
  publishEvent(code: string, description?: string, data?: unknown, channel?: 'events' | 'errors'): number;
  openMessageBox(body: unknown): MessageBox;
  readonly views: { open: MessageBox[]; closed: unknown[] };
  raiseFirmwareError(body?: unknown): FirmwareError;
  resolveFirmwareError(id: string): void;
  dropEventSockets(): number;
  injectRunError(seed?: RunErrorSeed): { armed: boolean; error?: PendingError };
  configureMachine(body: unknown): MachineState;
  configureDeck(body: unknown): Record<string, unknown>;
  configureRuns(options: {
    simulationSpeed?: unknown;
    statesAsNames?: unknown;
    failCreate?: unknown;
    endNext?: unknown;
  }): Record<string, unknown>;
}

export interface ControlReply extends Reply {
  /** work to do once the answer has been sent (restart) */
  after?: () => void;
}

export function handleControl(target: ControlTarget, method: string, path: string, body: unknown): ControlReply {
  const parts = path.split('/').filter(Boolean).slice(1); // drop 'sim'
  const route = `${method} /${parts.map((p, i) => (i === 1 && parts.length === 3 ? '*' : p)).join('/')}`;
  const obj = isObject(body) ? body : {};
  try {
    switch (route) {
      case 'POST /errors':
        return { status: 201, body: target.injectPendingError(obj as Partial<PendingErrorSeed>) };
      case 'POST /errors/*/resolve':
        target.resolvePendingError(decodeURIComponent(parts[1]));
        return { status: 204 };
      case 'POST /instrument-errors':
        return { status: 201, body: target.injectInstrumentError(obj as Partial<InstrumentErrorSeed>) };
      case 'POST /instrument-errors/*/resolve':
        target.resolveInstrumentError(decodeURIComponent(parts[1]));
        return { status: 204 };
      case 'POST /protocols':
        return { status: 201, body: { id: target.addProtocol(typeof obj.name === 'string' ? obj.name : undefined) } };
      case 'GET /faults':
        return { status: 200, body: target.faults };
      case 'PUT /faults':
        target.setFaults(obj as Faults);
        return { status: 200, body: target.faults };
      case 'DELETE /faults':
        target.clearFaults();
        return { status: 204 };
      case 'GET /requests':
        return { status: 200, body: target.requests };
      case 'DELETE /requests':
        target.clearRequests();
        return { status: 204 };
      case 'POST /reset':
        target.reset();
        return { status: 204 };
      case 'POST /restart': {
        const downtimeMs = typeof obj.downtimeMs === 'number' && obj.downtimeMs >= 0 ? obj.downtimeMs : 0;
        return {
          status: 202,
          body: { restarting: true, downtimeMs },
          after: () => {
            target.restart(downtimeMs).catch(() => undefined);
          },
        };
      }
      case 'GET /state':
        return { status: 200, body: target.summary() };
      case 'POST /events': {
        if (typeof obj.code !== 'string' || obj.code.trim() === '')
          return { status: 400, body: problem(400, 'code must be a non-empty string.') };
        const channel = obj.channel === 'errors' ? 'errors' : 'events';
        const description = typeof obj.description === 'string' ? obj.description : '';
        return { status: 202, body: { sent: target.publishEvent(obj.code, description, obj.data ?? {}, channel) } };
      }
      case 'POST /message-box':
        return { status: 201, body: target.openMessageBox(obj) };
      case 'GET /views':
        return { status: 200, body: target.views };
      case 'POST /firmware-error':
        return { status: 201, body: target.raiseFirmwareError(obj) };
      case 'POST /firmware-error/*/resolve':
        target.resolveFirmwareError(decodeURIComponent(parts[1]));
        return { status: 204 };
      case 'POST /event-sockets/drop':
        return { status: 200, body: { dropped: target.dropEventSockets() } };
      case 'GET /run':
        return { status: 200, body: target.configureRuns({}) };
      case 'PUT /run':
        return {
          status: 200,
          body: target.configureRuns({
            simulationSpeed: obj.simulationSpeed,
            statesAsNames: obj.statesAsNames,
            failCreate: obj.failCreate,
            endNext: obj.endNext,
          }),
        };
      case 'GET /machine':
        return { status: 200, body: target.configureMachine(undefined) };
      case 'PUT /machine':
        return { status: 200, body: target.configureMachine(body) };
      case 'GET /deck':
        return { status: 200, body: target.configureDeck(undefined) };
      case 'PUT /deck':
        return { status: 200, body: target.configureDeck(body) };
      case 'POST /run/error':
        return { status: 201, body: target.injectRunError(obj as RunErrorSeed) };
      default:
        return { status: 404, body: problem(404, `No control operation ${method} ${path}.`) };
    }
  } catch (err) {
    const e = err as { status?: number; body?: unknown; message?: string };
    if (typeof e.status === 'number' && e.body !== undefined) return { status: e.status, body: e.body };
    const notFound = /^no (pending|instrument) error/.test(e.message ?? '');
    return { status: notFound ? 404 : 400, body: problem(notFound ? 404 : 400, e.message ?? String(err)) };
  }
}
