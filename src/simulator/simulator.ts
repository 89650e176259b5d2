/**
 * The instrument simulator: interface A over HTTP (with the /sim control API on the same port), interface B
 * over HTTPS, shared state, fault injection and a request log. Node built-ins only.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import * as path from 'path';
import type { Socket, AddressInfo } from 'net';
import type { TLSSocket } from 'tls';
import { AuthService } from './auth';
import { StepStore } from './steps';
import { RuntimeErrorBook } from './runtime-errors';
import { InstrumentErrorBook } from './instrument-errors';
import { RunMachine, type RunErrorSeed } from './run-machine';
import { DEFAULT_POLICY, ServiceRoutineBook, seedServiceRoutines, seedSoftwareSettings } from './settings';
import { Router, type RequestContext, type Reply } from './router';
import { prepRoutes } from './routes-a';
import { instrumentRoutes } from './routes-b';
import { handleControl, type ControlTarget } from './control-api';
import { DEFAULT_TIMEOUT_HOLD_MS, normaliseFaults, rollFault } from './faults';
import { HttpProblem, htmlErrorPage, problem, unauthorized } from './problem';
import { A_RESPONSE_TYPE, B_MEDIA_TYPE, B_PROBLEM_TYPE, PROBLEM_TYPE, checkMediaType } from './media-types';
import { BodyTooLarge, headerValue, parseLoose, queryOf, readBody, send } from './http-io';
import { EventSockets, nestedFrame, type EventChannel, type FrameCasing } from './event-sockets';
import { MessageBoxBook, messageBoxRoutes, type MessageBox } from './message-boxes';
import { initialMachineState, machineRoutes, updateMachineState, type MachineState } from './machine-status';
import { ErrorPushes, type FirmwareError } from './error-pushes';
import type { Services } from './services';
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
  SimUser,
} from './types';

export const MAX_LOGGED_REQUESTS = 10_000;
const DEFAULT_USERS: SimUser[] = [{ username: 'admin', password: 'labwire' }];

export function certPath(name: 'ca.pem' | 'server.pem' | 'server-key.pem'): string {
  return path.join(__dirname, 'certs', name);
}

export class Simulator implements ControlTarget {
  readonly ca: string;
  private readonly host: string;
  private readonly prefix: string;
  private readonly lenient: boolean;
  private readonly seedEnabled: boolean;
  private readonly initialPolicy: PolicySettings;
  private readonly tls: { key: string; cert: string; clientCa?: string };
  private port: number;
  private httpsPort: number;

  private readonly services: Services;
  private readonly aRouter: Router;
  private readonly bRouter: Router;
  private currentFaults: Faults = {};
  private readonly log: LoggedRequest[] = [];

  private httpServer?: http.Server;
  private httpsServer?: https.Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** resolvers of delays still running: stop() settles them so nothing awaits forever */
  private readonly waiting = new Set<() => void>();
  /** bumped by every stop(): work that outlived a stop sees the change and gives up */
  private generation = 0;
  private running = false;
  private readonly socketsEnabled: boolean;
  private readonly eventSockets: EventSockets;
  private readonly messageBoxes = new MessageBoxBook();
  private machine: MachineState = initialMachineState();
  private readonly errorPushes: ErrorPushes;

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
    this.tls = {
      key: fs.readFileSync(certPath('server-key.pem'), 'utf8'),
      cert: fs.readFileSync(certPath('server.pem'), 'utf8'),
      clientCa: options.clientCa,
    };
    const settings = { software: seedSoftwareSettings(), policy: { ...this.initialPolicy } };
    const steps = new StepStore();
    steps.lenient = this.lenient;
    const runtimeErrors = new RuntimeErrorBook();
    const runs = new RunMachine({
      clock: { now: () => Date.now(), schedule: (ms, fn) => this.schedule(ms, fn) },
      steps,
      errors: runtimeErrors,
      speed: options.simulationSpeed,
      statesAsNames: options.runStatesAsNames,
      events: (code, description, data) => this.publishEvent(code, description, data),
    });
    runs.speedAsText = this.lenient;
    runtimeErrors.onHandled = (error) => runs.errorHandled(error);
    this.services = {
      auth: new AuthService({
        users: (options.users && options.users.length > 0 ? options.users : DEFAULT_USERS).map((u) => ({ ...u })),
        tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 300,
        instrumentTokens: [...(options.instrumentTokens ?? [])],
        policy: () => settings.policy,
        clockSpeed: () => this.currentFaults.clockSpeed ?? 1,
        lenient: this.lenient,
      }),
      steps,
      runtimeErrors,
      runs,
      routines: new ServiceRoutineBook(),
      instrument: new InstrumentErrorBook(),
      settings,
    };
    this.aRouter = new Router().addAll(prepRoutes(this.services));
    this.aRouter.addAll(messageBoxRoutes(this.messageBoxes));
    this.aRouter.addAll(machineRoutes(() => this.machine));
    this.bRouter = new Router().addAll(instrumentRoutes(this.services));
    this.seedState();
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
    const a = http.createServer((req, res) => void this.serve('A', req, res));
    const mutual = this.tls.clientCa ? { requestCert: true, rejectUnauthorized: true, ca: this.tls.clientCa } : {};
    const b = https.createServer(
      { key: this.tls.key, cert: this.tls.cert, ALPNProtocols: ['http/1.1'], ...mutual },
      (req, res) => void this.serve('B', req, res),
    );
    for (const server of [a, b]) {
      server.keepAliveTimeout = 5_000;
      server.on('connection', (socket: Socket) => {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
      });
      server.on('clientError', (_err, socket: Socket) => socket.destroy());
    }
    if (this.socketsEnabled) this.eventSockets.attach(a);
    try {
      this.port = await listen(a, this.port, this.host);
      this.httpServer = a;
      this.httpsPort = await listen(b, this.httpsPort, this.host);
      this.httpsServer = b;
    } catch (err) {
      await this.closeServers();
      throw err;
    }
    this.running = true;
    this.services.runs.rearm();
  }

  /** Closes both servers and every open socket, clears every timer. */
  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const resolve of waiting) resolve();
    this.eventSockets.dropAll();
    await this.closeServers();
  }

  /** Stops, waits `downtimeMs`, starts again on the same ports; all state is kept. */
  async restart(downtimeMs = 0): Promise<void> {
    const stopping = this.stop();
    const generation = this.generation; // stop() bumped it synchronously
    await stopping;
    if (downtimeMs > 0 && generation === this.generation) await this.delay(downtimeMs);
    if (generation !== this.generation) return; // stop() was called during the downtime: stay stopped
    await this.start();
  }

  // ---- control --------------------------------------------------------------------------------

  get requests(): LoggedRequest[] {
    return this.log;
  }

  clearRequests(): void {
    this.log.length = 0;
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
    const runs = this.services.runs;
    if (options.simulationSpeed !== undefined) runs.setSpeed(options.simulationSpeed);
    if (options.failCreate !== undefined) runs.failNextCreates(options.failCreate);
    if (options.endNext !== undefined) runs.endNext(options.endNext);
    if (options.statesAsNames !== undefined) {
      if (typeof options.statesAsNames !== 'boolean') throw new RangeError('statesAsNames must be a boolean');
      runs.statesAsNames = options.statesAsNames;
    }
    return {
      ...runs.status(),
      simulationSpeed: runs.speed,
      statesAsNames: runs.statesAsNames,
      records: runs.records.all.length,
      transitions: [...runs.transitions],
    };
  }

  /** PUT /sim/machine: door, controller, readiness, identity and whether the instrument offers these reads. */
  configureMachine(body: unknown): MachineState {
    if (body !== undefined) this.machine = updateMachineState(this.machine, body);
    return { ...this.machine };
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
    this.seedState();
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
    const s = this.services;
    return {
      protocols: s.steps.protocols,
      pendingErrors: s.runtimeErrors.pending,
      history: s.runtimeErrors.history,
      instrumentErrors: s.instrument.errors,
      handlers: s.instrument.handlers,
      softwareSettings: s.settings.software,
      serviceRoutines: s.routines.routines,
      logins: s.auth.logins,
      renewals: s.auth.renewals,
      failedLogins: s.auth.failedLogins,
    };
  }

  summary(): Record<string, unknown> {
    const st = this.state;
    let steps = 0;
    for (const p of st.protocols.values()) steps += p.steps.length;
    return {
      running: this.running,
      baseUrl: this.baseUrl,
      instrumentUrl: this.instrumentUrl,
      protocols: st.protocols.size,
      steps,
      pendingErrors: st.pendingErrors.length,
      historyErrors: st.history.length,
      instrumentErrors: st.instrumentErrors.length,
      unhandledInstrumentErrors: st.instrumentErrors.filter((e) => !e.handled).length,
      handlers: [...st.handlers],
      logins: st.logins,
      renewals: st.renewals,
      failedLogins: st.failedLogins,
      requests: this.log.length,
      faults: this.faults,
      eventSockets: this.socketsEnabled ? this.eventSockets.counts : 'off',
      openViews: this.messageBoxes.open.size,
      firmwareErrors: this.errorPushes.firmware.size,
    };
  }

  // ---- request handling -----------------------------------------------------------------------

  private async serve(api: 'A' | 'B', req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    let raw: string;
    try {
      raw = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) send(res, 413, problem(413, err.message), PROBLEM_TYPE, { Connection: 'close' });
      else req.socket.destroy();
      return;
    }
    if (api === 'A' && (url.pathname === '/sim' || url.pathname.startsWith('/sim/'))) {
      const reply = handleControl(this, method, url.pathname, parseLoose(raw));
      send(res, reply.status, reply.body, A_RESPONSE_TYPE);
      if (reply.after) res.once('finish', reply.after);
      this.syncErrorPushes();
      return;
    }
    const inPrefix =
      api === 'B' || this.prefix === '' || url.pathname === this.prefix || url.pathname.startsWith(`${this.prefix}/`);
    const entry: LoggedRequest = {
      api,
      method,
      path: api === 'A' && inPrefix ? url.pathname.slice(this.prefix.length) || '/' : url.pathname,
      query: queryOf(url),
      contentType: headerValue(req, 'content-type'),
      authorization: headerValue(req, 'authorization'),
      body: parseLoose(raw),
      status: 0,
      time: Date.now(),
      host: headerValue(req, 'host'),
      remotePort: req.socket.remotePort,
      ...tlsDetails(req),
    };
    this.record(entry);

    const faults = this.currentFaults;
    const generation = this.generation;
    if (faults.latencyMs) await this.delay(faults.latencyMs);
    if (!this.running || generation !== this.generation || res.destroyed) return;
    const outcome = rollFault(faults, Math.random, req.method);
    if (outcome === 'reset') {
      req.socket.destroy();
      return;
    }
    if (outcome === 'timeout') {
      // never answered: the socket is released at stop()/restart() or after timeoutHoldMs
      this.schedule(faults.timeoutHoldMs ?? DEFAULT_TIMEOUT_HOLD_MS, () => req.socket.destroy());
      return;
    }
    if (outcome === 'status') {
      const status = faults.statusCode ?? 503;
      entry.status = status;
      if (faults.htmlErrors) send(res, status, htmlErrorPage(status), 'text/html; charset=utf-8');
      else
        send(
          res,
          status,
          problem(status, `Fault injected by the simulator (HTTP ${status}).`),
          api === 'A' ? PROBLEM_TYPE : B_PROBLEM_TYPE,
        );
      return;
    }

    const reply = inPrefix
      ? this.dispatch(api, method, entry, req, raw)
      : problemReply(new HttpProblem(404, `No resource at ${url.pathname}; the service lives under ${this.prefix}.`));
    if (reply.resetConnection) {
      req.socket.destroy();
      return;
    }
    entry.status = reply.status;
    const isProblem = reply.status >= 400;
    const type = api === 'A' ? (isProblem ? PROBLEM_TYPE : A_RESPONSE_TYPE) : isProblem ? B_PROBLEM_TYPE : B_MEDIA_TYPE;
    const credentialPath = api === 'A' && method === 'POST' && /^\/api\/v1\/authenticate(\/renew-token)?$/.test(entry.path);
    if (faults.loginRejectionDelayMs && credentialPath && isProblem && reply.status < 500) {
      await this.delay(faults.loginRejectionDelayMs);
      if (!this.running || generation !== this.generation || res.destroyed) return;
    }
    if (faults.trickleMs) this.trickle(res, reply.status, JSON.stringify(reply.body ?? ''), type, faults.trickleMs);
    else send(res, reply.status, reply.body, reply.headers?.['Content-Type'] ?? type, reply.headers);
    if (api === 'A' && method !== 'GET') this.syncErrorPushes();
  }

  /** Sends the answer's body one byte at a time, `everyMs` apart. */
  private trickle(res: http.ServerResponse, status: number, text: string, type: string, everyMs: number): void {
    const bytes = Buffer.from(text);
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length });
    let i = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (i >= bytes.length) return void res.end();
      res.write(bytes.subarray(i, ++i));
      this.schedule(everyMs, next);
    };
    next();
  }

  private dispatch(api: 'A' | 'B', method: string, entry: LoggedRequest, req: http.IncomingMessage, raw: string): Reply {
    const match = (api === 'A' ? this.aRouter : this.bRouter).match(method, entry.path);
    if (match.kind === 'not-found') return problemReply(new HttpProblem(404, `No resource at ${entry.path}.`));
    if (match.kind === 'method-not-allowed') {
      return problemReply(
        new HttpProblem(405, `${method} is not allowed on ${entry.path}.`, { headers: { Allow: match.allow.join(', ') } }),
      );
    }
    try {
      const { route, params } = match;
      const principal = this.services.auth.principalOf(entry.authorization, api);
      const open = api === 'A' && !this.services.settings.policy.enableUserManagement;
      // lenient: the status reads the tested tools make before logging in answer without a token, as on hardware
      // (only without an Authorization header: an expired or bad token is still a 401, so renewals stay tested)
      const tokenless =
        this.lenient && api === 'A' && method === 'GET' && !entry.authorization && TOKENLESS_READS.has(entry.path.toLowerCase());
      if (route.auth && !principal && !open && !tokenless) throw unauthorized();
      checkMediaType(route.body, entry.contentType, api === 'A' && this.lenient);
      let body: unknown;
      if (route.body !== 'none') {
        if (raw.trim() === '')
          throw new HttpProblem(400, 'A non-empty request body is required.', {
            errors: { $: ['A non-empty request body is required.'] },
          });
        try {
          body = JSON.parse(raw) as unknown;
        } catch (err) {
          throw new HttpProblem(400, `The request body is not valid JSON: ${(err as Error).message}`, {
            errors: { $: ['The JSON value could not be converted.'] },
          });
        }
      }
      const ctx: RequestContext = {
        api,
        method,
        path: entry.path,
        query: entry.query,
        params,
        headers: req.headers,
        body,
        principal,
      };
      if (api === 'A') {
        const firmwareAnswer = this.errorPushes.answerFirmware(ctx);
        if (firmwareAnswer) return firmwareAnswer;
      }
      return route.handle(ctx);
    } catch (err) {
      if (err instanceof HttpProblem) return problemReply(err);
      return { status: 500, body: problem(500, err instanceof Error ? err.message : String(err)) };
    }
  }

  // ---- internals ------------------------------------------------------------------------------

  private seedState(): void {
    const s = this.services;
    s.steps.clear();
    s.routines.routines = [];
    if (this.seedEnabled) {
      s.steps.seed();
      s.routines.routines = seedServiceRoutines();
    }
    s.settings.software = seedSoftwareSettings();
    s.settings.policy = { ...this.initialPolicy };
    s.runtimeErrors.clear();
    s.runs.reset();
    s.instrument.clear();
    s.auth.reset();
  }

  private record(entry: LoggedRequest): void {
    this.log.push(entry);
    if (this.log.length > MAX_LOGGED_REQUESTS) this.log.splice(0, this.log.length - MAX_LOGGED_REQUESTS);
  }

  /** Returns a function that cancels the timer. */
  private schedule(ms: number, fn: () => void): () => void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return () => {
      clearTimeout(t);
      this.timers.delete(t);
    };
  }

  /** A delay that stop() cuts short (callers check `running` or `generation` afterwards). */
  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.waiting.delete(done);
        resolve();
      };
      this.waiting.add(done);
      this.schedule(ms, done);
    });
  }

  private async closeServers(): Promise<void> {
    const servers = [this.httpServer, this.httpsServer].filter((s): s is http.Server | https.Server => s !== undefined);
    this.httpServer = undefined;
    this.httpsServer = undefined;
    const closed = servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())));
    for (const s of servers) s.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await Promise.all(closed);
    // 'close' is emitted before libuv has released the handles; they are gone after the loop's close phase
    if (servers.length > 0) await afterClosePhase();
  }
}

function tlsDetails(req: http.IncomingMessage): Pick<LoggedRequest, 'clientCertificate' | 'alpnProtocol'> {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return {};
  const out: Pick<LoggedRequest, 'clientCertificate' | 'alpnProtocol'> = {};
  const cn = socket.getPeerCertificate().subject?.CN;
  if (typeof cn === 'string' && cn !== '') out.clientCertificate = cn;
  if (typeof socket.alpnProtocol === 'string') out.alpnProtocol = socket.alpnProtocol;
  return out;
}

function afterClosePhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setTimeout(resolve, 0)));
}

/** Status reads a real instrument answers without a token (the tested tools log in only after a 401). */
const TOKENLESS_READS = new Set([
  '/api/v1/system-ready',
  '/api/v1/errors/check-for-pending-errors',
  '/api/v1/protocol-run',
  '/api/v1/instruments/global-run-state',
  '/api/v1/instruments/connection-status',
]);

/** `strict` wins; otherwise the older `lenientMediaTypes` (false = strict); the default is the real instrument's leniency. */
export function isStrict(options: Pick<SimulatorOptions, 'strict' | 'lenientMediaTypes'>): boolean {
  if (options.strict !== undefined) return options.strict;
  return options.lenientMediaTypes === false;
}

function problemReply(p: HttpProblem): Reply {
  return { status: p.status, body: p.body, headers: p.headers };
}

function normalisePrefix(prefix: string): string {
  const trimmed = prefix.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
