/**
 * The instrument simulator: interface A over HTTP (with the /sim control API on the same port), interface B
 * over HTTPS, shared state, fault injection and a request log. Node built-ins only.
 *
 * This class wires the parts and is the API tests and scripts drive: the servers (servers.ts), the request
 * pipeline (serve.ts, dispatch.ts), the route tables (routes-a.ts, routes-b.ts), the control API (control-api.ts),
 * the run state machine (run-machine.ts) and the other stateful parts (sim-services.ts).
 */
import * as fs from 'fs';

import { type ControlTarget, handleControl } from './control-api';
import { dispatch, type DispatchContext } from './dispatch';
import { ErrorPushes, type FirmwareError } from './error-pushes';
import { type EventChannel, EventSockets, type FrameCasing, nestedFrame } from './event-sockets';
import { normaliseFaults } from './faults';
import { initialMachineState, type MachineState, updateMachineState } from './machine-status';
import { type MessageBox, MessageBoxBook } from './message-boxes';
import { RequestLog } from './request-log';
import type { Route, Router } from './router';
import { interfaceARouter } from './routes-a';
import { interfaceBRouter } from './routes-b';
import { deckRoutes, DeckSim } from './routes-deck';
import type { RunErrorSeed, RunMachine } from './run-machine';
import { serve, type ServeContext } from './serve';
import { certPath, ServerPair, serverTls } from './servers';
import type { Services } from './services';
import { DEFAULT_POLICY } from './settings';
import { isStrict, normalisePrefix, urlHost } from './sim-options';
import { createServices, seedServices, stateCounts, stateOf } from './sim-services';
import { TimerSet } from './timers';
import type {
  Faults,
  InstrumentError,
  InstrumentErrorSeed,
  LoggedRequest,
  PendingError,
  PendingErrorSeed,
  PolicySettings,
  SimulatorOptions,
  SimulatorState,
} from './types';

export { MAX_LOGGED_REQUESTS } from './request-log';
export { certPath } from './servers';
export { isStrict } from './sim-options';

export class Simulator implements ControlTarget {
  readonly ca: string;
  private readonly host: string;
  private readonly prefix: string;
  private readonly lenient: boolean;
  private readonly seedEnabled: boolean;
  private readonly initialPolicy: PolicySettings;
  private port: number;
  private httpsPort: number;

  private readonly services: Services;
  private currentFaults: Faults = {};
  private readonly log = new RequestLog();
  private readonly routers: { A: Router; B: Router };
  private readonly timers = new TimerSet();
  private readonly servers: ServerPair;
  private running = false;
  private readonly socketsEnabled: boolean;
  private readonly eventSockets: EventSockets;
  private readonly messageBoxes = new MessageBoxBook();
  private machine: MachineState = initialMachineState();
  private readonly errorPushes: ErrorPushes;
  /** camera, deck scan, initialise, heater-cooler, lights, sensors, traces (routes-deck.ts) */
  readonly deck: DeckSim;

  constructor(options: SimulatorOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port ?? 0;
    this.httpsPort = options.httpsPort ?? 0;
    this.prefix = normalisePrefix(options.prefix ?? '');
    this.lenient = !isStrict(options);
    this.seedEnabled = options.seed ?? true;
    this.socketsEnabled = options.sockets ?? true;
    this.eventSockets = new EventSockets(this.prefix);
    this.errorPushes = new ErrorPushes((frame) => this.eventSockets.publish('errors', frame), this.frameCasing);
    this.initialPolicy = { ...DEFAULT_POLICY, ...(options.policy ?? {}) };
    this.ca = fs.readFileSync(certPath('ca.pem'), 'utf8');
    this.services = createServices(options, {
      lenient: this.lenient,
      policy: this.initialPolicy,
      clock: { now: () => Date.now(), schedule: (ms, fn) => this.timers.schedule(ms, fn) },
      runEvents: (code, description, data) => this.publishEvent(code, description, data),
      clockSpeed: () => this.currentFaults.clockSpeed ?? 1,
    });
    this.deck = new DeckSim({
      timers: this.timers,
      now: () => Date.now(),
      runs: this.services.runs,
      pendingErrors: () => this.services.runtimeErrors.pending,
    });
    const routers = (this.routers = {
      A: interfaceARouter(this.services, this.messageBoxes, () => this.machine).addAll(deckRoutes(this.deck)),
      B: interfaceBRouter(this.services),
    });
    const dispatching: DispatchContext = {
      lenient: this.lenient,
      routers,
      auth: this.services.auth,
      userManagement: () => this.services.settings.policy.enableUserManagement,
      firmwareAnswer: (ctx) => this.errorPushes.answerFirmware(ctx),
    };
    const serving: ServeContext = {
      prefix: this.prefix,
      timers: this.timers,
      log: this.log,
      running: () => this.running,
      faults: () => this.currentFaults,
      control: (method, path, body) => handleControl(this, method, path, body),
      dispatch: (api, entry, req, raw) => dispatch(dispatching, api, entry, req.headers, raw),
      syncErrorPushes: () => this.syncErrorPushes(),
    };
    this.servers = new ServerPair(serverTls(options.clientCa), (api, req, res) => void serve(serving, api, req, res));
    seedServices(this.services, this.seedEnabled, this.initialPolicy);
  }

  // ---- addresses -------------------------------------------------------------------------------

  get controlUrl(): string {
    return `http://${urlHost(this.host)}:${this.port}`;
  }

  get baseUrl(): string {
    return `${this.controlUrl}${this.prefix}`;
  }

  get instrumentUrl(): string {
    return `https://${urlHost(this.host)}:${this.httpsPort}`;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.running) return;
    const ports = await this.servers.start(this.host, { port: this.port, httpsPort: this.httpsPort }, (a) => {
      if (this.socketsEnabled) this.eventSockets.attach(a);
    });
    this.port = ports.port;
    this.httpsPort = ports.httpsPort;
    this.running = true;
    this.services.runs.rearm();
  }

  /** Closes both servers and every open socket, clears every timer. */
  async stop(): Promise<void> {
    this.running = false;
    this.timers.stopAll();
    this.eventSockets.dropAll();
    await this.servers.close();
  }

  /** Stops, waits `downtimeMs`, starts again on the same ports; all state is kept. */
  async restart(downtimeMs = 0): Promise<void> {
    const stopping = this.stop();
    const generation = this.timers.generation; // stop() bumped it synchronously
    await stopping;
    if (downtimeMs > 0 && generation === this.timers.generation) await this.timers.delay(downtimeMs);
    if (generation !== this.timers.generation) return; // stop() was called during the downtime: stay stopped
    await this.start();
  }

  // ---- control --------------------------------------------------------------------------------

  /** Each A and B request as it is logged, before it is served; returns the function that stops listening. */
  onRequest(listener: (entry: LoggedRequest) => void): () => void {
    return this.log.onRecord(listener);
  }

  /** The routes of A and B (what the simulator serves besides /sim). */
  routeTable(): { A: Route[]; B: Route[] } {
    return { A: this.routers.A.list, B: this.routers.B.list };
  }

  get requests(): LoggedRequest[] {
    return this.log.entries;
  }

  clearRequests(): void {
    this.log.clear();
  }

  get faults(): Faults {
    return { ...this.currentFaults };
  }

  /** Replaces the active faults with `f` (fields left out are off); throws RangeError for nonsense values. */
  setFaults(f: Faults): void {
    this.currentFaults = normaliseFaults(f);
  }

  clearFaults(): void {
    this.currentFaults = {};
  }

  injectPendingError(partial: Partial<PendingErrorSeed> = {}): PendingError {
    const error = this.services.runtimeErrors.inject(partial);
    this.syncErrorPushes();
    return error;
  }

  injectInstrumentError(partial: Partial<InstrumentErrorSeed> = {}): InstrumentError {
    return this.services.instrument.inject(partial);
  }

  resolvePendingError(id: string): void {
    this.services.runtimeErrors.resolve(id);
    this.syncErrorPushes();
  }

  /** As if the operator chose the default action on the instrument's screen. */
  resolveInstrumentError(uuid: string): void {
    this.services.instrument.resolve(uuid);
  }

  /** The run state machine (protocol-run/*, run-data). */
  get runs(): RunMachine {
    return this.services.runs;
  }

  /** POST /sim/run/error: a runtime error during the run, now or when step `atStep` starts. */
  injectRunError(seed: RunErrorSeed = {}): { armed: boolean; error?: PendingError } {
    return this.services.runs.injectError(seed);
  }

  /** PUT /sim/run: simulation speed and whether run states are served as names. */
  configureRuns(options: {
    simulationSpeed?: unknown;
    statesAsNames?: unknown;
    failCreate?: unknown;
    endNext?: unknown;
  }): Record<string, unknown> {
    return this.services.runs.configure(options);
  }

  /** PUT /sim/machine: door, controller, readiness, identity and whether the instrument offers these reads. */
  configureMachine(body: unknown): MachineState {
    if (body !== undefined) this.machine = updateMachineState(this.machine, body);
    return { ...this.machine };
  }

  /** PUT /sim/deck {camera?, cameraNotImage?, cameraRefuses?, initialized?}: no camera, a broken one, one refusing (401). */
  configureDeck(body: unknown): Record<string, unknown> {
    return { ...this.deck.configure(body) };
  }

  addProtocol(name?: string): number {
    return this.services.steps.addProtocol(name);
  }

  setUserPasswordExpired(username: string, expired: boolean): void {
    this.services.auth.setPasswordExpired(username, expired);
  }

  /** As if an administrator changed the user's password on the instrument (reset() restores the configured one). */
  setUserPassword(username: string, password: string): void {
    this.services.auth.setPassword(username, password);
  }

  /** Back to the seed state: faults, log, handlers and lockouts cleared. Issued tokens stay valid. */
  reset(): void {
    this.machine = initialMachineState();
    this.deck.reset();
    seedServices(this.services, this.seedEnabled, this.initialPolicy);
    this.clearFaults();
    this.clearRequests();
    this.messageBoxes.clear();
    this.errorPushes.clear();
    this.errorPushes.pushOnAnswer = true;
    this.eventSockets.closeAtOnce = false;
  }

  // ---- live events (websockets beside A) ----------------------------------------------------------

  /** Pushes an event on `instinctevents` (run state changes, time remaining, run finished, ...); returns the number of clients reached. */
  publishEvent(code: string, description = '', data: unknown = {}, channel: EventChannel = 'events'): number {
    return this.eventSockets.publish(channel, nestedFrame(code, description, data, this.frameCasing));
  }

  /** Frames in the observed `{code, description, data}` casing, PascalCase when strict. */
  get frameCasing(): FrameCasing {
    return this.lenient ? 'observed' : 'pascal';
  }

  /** Sends a frame exactly as given (tests: an oversized or malformed frame); returns the number of clients reached. */
  publishRawFrame(channel: EventChannel, frame: string | Buffer): number {
    return this.eventSockets.publishRaw(channel, frame);
  }

  /** A hostile instrument: every websocket upgrade is accepted and the connection closed at once (reset() ends it). */
  setSocketsCloseAtOnce(on: boolean): void {
    this.eventSockets.closeAtOnce = on;
  }

  /** Opens a dialog on the instrument: pushed as a `messagebox` event, closed by POST maintenance/close-view. */
  openMessageBox(body: unknown): MessageBox {
    const box = this.messageBoxes.openBox(body);
    this.publishEvent('messagebox', box.title, {
      viewId: box.viewId,
      title: box.title,
      message: box.message,
      buttons: box.buttons,
    });
    return box;
  }

  get views(): { open: MessageBox[]; closed: MessageBoxBook['closed'] } {
    return { open: [...this.messageBoxes.open.values()], closed: [...this.messageBoxes.closed] };
  }

  /** A runtime error that exists only on `instincterrors` (not in the error list), as firmware errors do. */
  raiseFirmwareError(body: unknown = {}): FirmwareError {
    return this.errorPushes.raiseFirmware(body);
  }

  resolveFirmwareError(id: string): void {
    this.errorPushes.resolveFirmware(id);
  }

  /** Whether answering a firmware error pushes its resolution (default true; reset() turns it on again). */
  set firmwareAnswerPushesResolution(on: boolean) {
    this.errorPushes.pushOnAnswer = on;
  }

  /** Drops every websocket connection (as a network failure would); returns how many. */
  dropEventSockets(): number {
    return this.eventSockets.dropAll();
  }

  /** Open websocket connections per channel, and the upgrade requests seen (with the Authorization offered). */
  get eventSocketInfo(): { enabled: boolean; counts: Record<EventChannel, number>; upgrades: EventSockets['upgrades'] } {
    return { enabled: this.socketsEnabled, counts: this.eventSockets.counts, upgrades: this.eventSockets.upgrades };
  }

  private syncErrorPushes(): void {
    this.errorPushes.sync(this.services.runtimeErrors.pending);
  }

  get state(): Readonly<SimulatorState> {
    return stateOf(this.services);
  }

  summary(): Record<string, unknown> {
    return {
      running: this.running,
      baseUrl: this.baseUrl,
      instrumentUrl: this.instrumentUrl,
      ...stateCounts(this.state),
      requests: this.log.entries.length,
      faults: this.faults,
      eventSockets: this.socketsEnabled ? this.eventSockets.counts : 'off',
      openViews: this.messageBoxes.open.size,
      firmwareErrors: this.errorPushes.firmware.size,
    };
  }
}
