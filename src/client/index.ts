import { EventEmitter } from 'events';

import { AnswerLedger, InstrumentAnswers } from './answer-ledger';
import { DeckApi } from './deck';
import { DialogApi } from './dialogs';
import { LhError } from './errors';
import { type EventStreamOptions, InstrumentEvents } from './events';
import { InstrumentApi } from './instrument';
import { LoginGate } from './login-gate';
import { MachineApi } from './machine';
import { PendingWork } from './pending-work';
import { CHECK_AUTHENTICATION, PrepApi } from './prep';
import { RunStartClaims } from './run-starts';
import { RunsApi } from './runs';
import {
  type Credentials,
  Session,
  SESSION_CHECK_MAX_MS,
  SESSION_CHECK_MIN_MS,
  type SessionOptions,
  type UnsignedSpec,
} from './session';
import { type ApiResponse, type AuditHook, type RequestObserver, type TlsOptions, Transport } from './transport';
import { checkUrls } from './url-checks';

export {
  answeredAnother,
  AnswerLedger,
  AnswerOptions,
  AnswerRecord,
  InstrumentAnswers,
  SharedAnswerClaim,
  SharedAnswerClaims,
  urlKey,
} from './answer-ledger';
export type { HeldApplyLock, ProtocolApplyLocks } from './apply-locks';
export * from './deck';
export { CloseViewBody, closeViewBody, CloseViewInput, DialogApi, VIEW_RESULTS, ViewResult } from './dialogs';
export * from './error-identity';
export * from './errors';
export * from './event-frames';
export * from './events';
export { fieldName, FORBIDDEN_KEYS, normaliseKeys } from './field-names';
export { InstrumentApi, RecoveryKind } from './instrument';
export { type KeptRejection, type LoginCredentials, LoginGate, type RejectionStore } from './login-gate';
export * from './machine';
export * from './password-expiry';
export { CHECK_AUTHENTICATION, PrepApi, serviceRoutine, softwareSettings } from './prep';
export { ProtocolRef, protocolRef, resolveProtocol, resolveProtocolName } from './protocols';
export * from './run-results';
export * from './run-starts';
export * from './run-state';
export {
  checkLoadOverrides,
  CREATE_TIMEOUT_MS,
  LOAD_COMPLETE_TIMEOUT_MS,
  ProtocolName,
  ProtocolValidation,
  RunRecordSummary,
  RunsApi,
} from './runs';
export { FileDownload } from './runs';
export {
  Credentials,
  isLoginWithoutVerdict,
  Session,
  SESSION_CHECK_MAX_MS,
  SESSION_CHECK_MIN_MS,
  sessionCheckDue,
  SessionState,
} from './session';
export {
  MAX_BODY_BYTES,
  MEDIA_JSON,
  MEDIA_JSON_PATCH,
  MEDIA_VECTOR,
  neverReached,
  TlsOptions,
  Transport,
  trimBase,
} from './transport';
export { AuditedRequest, AuditHook, AuditIntent, AuditOutcome, AuditResult, isAudited, UNAUDITED_OPERATIONS } from './transport';
export { RequestObservation, RequestObserver } from './transport';
export * from './types';
export * as validate from './validate';
export * from './wall-clock';

/**
 * What a client keeps about its instrument beyond itself, shared by every client of the instrument: the answer
 * ledgers of its interfaces and its run-start claims (the instrument's home, src/instrument, holds them).
 */
export interface InstrumentBooks {
  readonly answersA: AnswerLedger;
  readonly answersB: AnswerLedger;
  readonly runStarts: RunStartClaims;
  /** The logins of the instrument: one password sent at a time per user, a rejection holding every session back. */
  readonly logins: LoginGate;
}

/** Books of a client alone (a client made without its instrument's home: tests, scripts). */
export function ownBooks(): InstrumentBooks {
  return { answersA: new AnswerLedger(), answersB: new AnswerLedger(), runStarts: new RunStartClaims(), logins: new LoginGate() };
}

export interface ClientOptions extends SessionOptions {
  baseUrl: string;
  instrumentUrl?: string;
  timeoutMs?: number;
  tls?: TlsOptions;
  credentials?: Credentials;
  /** Bearer token for interface B; when empty B reuses A's session token. */
  instrumentToken?: string;
  retries?: number;
  retryBaseDelayMs?: number;
  /** Lets interface B run over plain http:// (tests only: its token travels in clear). Default false. */
  allowInsecureInstrument?: boolean;
  /** Reconnect and heartbeat timings of the event sockets (tests). */
  events?: Omit<EventStreamOptions, 'baseUrl' | 'tls' | 'token'>;
  /** The largest answer body accepted (default 32 MiB). */
  maxResponseBytes?: number;
  /** The audit trail every instrument-changing request is recorded in (src/audit). */
  audit?: AuditHook;
  /** The instrument's answer ledgers and run-start claims (its home's); without them, the client's own. */
  books?: InstrumentBooks;
}

/** Everything one instrument needs: transport, session and the two APIs. */
export class LiquidHandlerClient extends EventEmitter {
  readonly transport: Transport;
  readonly session: Session;
  readonly prep: PrepApi;
  readonly instrument: InstrumentApi;
  /** The instrument's live events (websockets beside A), opened on the first subscription. */
  readonly events: InstrumentEvents;
  /** Instrument dialogs: close-view. */
  readonly dialogs: DialogApi;
  /** Protocols, protocol runs and run records (interface A). */
  readonly runs: RunsApi;
  /** What the workstation says about itself: system ready, controller, sensors, name, software versions (A). */
  readonly machine: MachineApi;
  /** The instrument's own controls: camera, deck scan, initialise, heater-cooler, lights, sensors, traces (A). */
  readonly deck: DeckApi;
  /** The answer ledgers and run-start claims of the instrument, shared with its other clients. */
  private readonly books: InstrumentBooks;
  private readonly lastWork = new PendingWork();
  /** Stops the session checks (checkSessionEvery) still running: close() stops them first. */
  private readonly checkStops = new Set<() => void>();

  constructor(private readonly options: ClientOptions) {
    super();
    checkUrls(options);
    this.books = options.books ?? ownBooks();
    this.transport = new Transport(options);
    this.session = new Session(this.transport, options.credentials ?? {}, { ...options, logins: this.books.logins });
    this.session.on('state', (state) => this.emit('session', state));
    // one listener per node of this instrument (a fleet may have dozens per client), each removed when its node closes
    this.setMaxListeners(0);
    this.session.on('password-warning', (warning) => this.emit('password-warning', warning));
    this.prep = new PrepApi((spec) => this.session.send(spec), this.answers.a);
    this.instrument = new InstrumentApi((spec) => this.sendB(spec), this.answers.b);
    this.events = new InstrumentEvents({
      baseUrl: options.baseUrl,
      tls: options.tls,
      // the instrument also accepts sockets without a token: no configured user, no token
      token: async () => (this.session.usesLogin ? this.session.token() : undefined),
      ...options.events,
    });
    this.dialogs = new DialogApi((spec) => this.session.send(spec));
    this.runs = new RunsApi(
      (spec) => this.session.send(spec),
      () => this.books.runStarts.readingStatus(),
    );
    this.machine = new MachineApi((spec) => this.session.send(spec));
    this.deck = new DeckApi((spec) => this.session.send(spec));
  }

  /** The answers this Node-RED gave to this instrument's errors: one ledger per interface, in the instrument's home. */
  get answers(): InstrumentAnswers {
    return new InstrumentAnswers(this.books.answersA, this.transport.instrumentUrl ? this.books.answersB : undefined);
  }

  /** One run start in flight per instrument: the claims every client of the instrument shares. */
  get runStarts(): RunStartClaims {
    return this.books.runStarts;
  }

  /** Interface A's root URL as configured (trailing slashes removed). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Interface B's root URL, when configured. */
  get instrumentUrl(): string | undefined {
    return this.transport.instrumentUrl;
  }

  get hasInstrumentInterface(): boolean {
    return Boolean(this.options.instrumentUrl);
  }

  /** Whether interface B's requests go through the session (no instrument token): a refused login stops them too. */
  get instrumentUsesSession(): boolean {
    return !this.options.instrumentToken;
  }

  /**
   * Lets a node finish one last request while the flow stops (e.g. unregistering its error handler): close()
   * waits for it before logging out. The caller bounds it with its own timeout.
   */
  finishBeforeClose(work: Promise<unknown>): void {
    this.lastWork.add(work);
  }

  /**
   * The session health check: every `ms`, while the session holds a token that is not yet due for renewal, asks the
   * instrument whether it still accepts it (check-authentication). A token revoked on the instrument is then noticed
   * and replaced (one login, as for any request on a 401) before a node needs it, also in flows that poll nothing. It
   * never logs in or renews by itself, nor keeps an idle session alive. `report` gets each check's outcome (undefined
   * when it held); close() waits for a check in flight. Returns the function that stops the checks.
   */
  checkSessionEvery(ms: number, report: (err?: LhError) => void): () => void {
    let inFlight = false; // a check still retrying (or held by a slow instrument) is not joined by the next one
    let stopped = false;
    const every = Math.min(SESSION_CHECK_MAX_MS, Math.max(SESSION_CHECK_MIN_MS, Number.isFinite(ms) ? ms : SESSION_CHECK_MAX_MS));
    const timer = setInterval(() => {
      if (inFlight || stopped) return;
      inFlight = true;
      const check = this.session
        .checkHeld(CHECK_AUTHENTICATION, () => !stopped)
        .then(
          (sent) => {
            if (sent && !stopped) report();
          },
          (err: unknown) => {
            if (stopped) return;
            report(
              err instanceof LhError ? err : new LhError(String(err), { kind: 'network', operation: 'check-authentication' }),
            );
          },
        );
      this.finishBeforeClose(check.finally(() => (inFlight = false)));
    }, every);
    timer.unref();
    const stop = (): void => {
      stopped = true;
      clearInterval(timer);
      this.checkStops.delete(stop);
    };
    this.checkStops.add(stop);
    return stop;
  }

  /**
   * Tells `observer` the outcome of every request this client sends from now on (answered or not, on A or B), before
   * its caller gets it: what the lh-server's shared connection state is built from. Returns the function that stops it.
   */
  onRequestOutcome(observer: RequestObserver): () => void {
    return this.transport.observe(observer);
  }

  /** Whether close() (or destroy()) ended this client: a request it aborted failed because of that, not the instrument. */
  get closed(): boolean {
    return this.transport.isClosed;
  }

  /** Logs out and frees every socket and timer. */
  async close(): Promise<void> {
    for (const stop of [...this.checkStops]) stop();
    await this.lastWork.settled();
    await this.events.close();
    await this.session.end();
    this.transport.close(); // aborts what is still in flight: its outcome (not sent / unknown) is written next
    await this.transport.outcomesWritten();
    this.removeAllListeners();
  }

  /** Resolves once every audited request so far has its outcome record written: wait for it before closing the trail. */
  auditSettled(): Promise<void> {
    return this.transport.outcomesWritten();
  }

  /** Frees every socket at once, without logging out: for a close that ran out of time. */
  destroy(): void {
    this.transport.close();
  }

  private async sendB<T>(spec: UnsignedSpec): Promise<ApiResponse<T>> {
    const token = this.options.instrumentToken;
    if (!token) return this.session.send<T>(spec);
    try {
      return await this.transport.request<T>({ ...spec, token });
    } catch (err) {
      if (err instanceof LhError && err.statusCode === 401) {
        throw new LhError(`${spec.operation}: the instrument rejected the instrument token configured in the lh-server node`, {
          kind: 'auth',
          operation: spec.operation,
          statusCode: 401,
          body: err.body,
        });
      }
      throw err;
    }
  }
}
