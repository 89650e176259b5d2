import type http from 'http';

import { clipOutside, secretsIn } from '../contract/redaction';
import { isUnreachable, LhError, validationError } from './errors';
import { MAX_FRAME_DEPTH, TOO_DEEP } from './event-frames';
import { bodyProblem, normaliseKeys } from './field-names';
import { type HttpAnswer, InstrumentHttp, isAnswerTooLarge, type TlsOptions } from './http-client';
import { PendingWork } from './pending-work';
import { withinSpan } from './wall-clock';

export { normaliseKeys } from './field-names';
export type { TlsOptions } from './http-client';

export type Api = 'A' | 'B';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export const A_ROOT = '/api/v1';
export const B_ROOT = '/api/vector/v3';
export const MEDIA_JSON = 'application/json';
export const MEDIA_JSON_PATCH = 'application/json-patch+json';
export const MEDIA_VECTOR = 'application/json; x-api-version=3.0';
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/**
 * An answer nests no deeper than this (instrument answers are a few levels deep): a deeper one, however small, is
 * refused, since Node-RED cannot carry it (the clone of a msg wired to two nodes, a debug node's JSON overflow the stack).
 * The bound of event frames: a cut answer's values say TOO_DEEP, which names that bound.
 */
export const MAX_ANSWER_DEPTH = MAX_FRAME_DEPTH;

/** Whether a parsed JSON value nests deeper than `max` levels; iterative, so any depth JSON.parse made is measured. */
export function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v as object)) {
      if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
    }
  }
  return false;
}

/**
 * `value` (parsed JSON, changed in place) with every object or array nested `max` levels or deeper replaced by
 * TOO_DEEP, as event frames are; iterative, so any depth JSON.parse made is cut.
 */
export function cutDeeper(value: unknown, max: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (max <= 0) return TOO_DEEP;
  const stack: [Record<string, unknown>, number][] = [[value as Record<string, unknown>, 0]];
  while (stack.length > 0) {
    const [container, depth] = stack.pop()!;
    for (const key of Object.keys(container)) {
      const child = container[key];
      if (typeof child !== 'object' || child === null) continue;
      // an own property (JSON.parse makes "__proto__" one too): assigning it never touches the prototype
      if (depth + 1 >= max) container[key] = TOO_DEEP;
      else stack.push([child as Record<string, unknown>, depth + 1]);
    }
  }
  return value;
}

export interface TransportOptions {
  baseUrl: string;
  instrumentUrl?: string;
  timeoutMs?: number;
  tls?: TlsOptions;
  retries?: number;
  retryBaseDelayMs?: number;
  maxSockets?: number;
  /** The largest answer body accepted (default 32 MiB). */
  maxResponseBytes?: number;
  /** Records every request that changes the instrument (src/audit): intent before sending, outcome after. */
  audit?: AuditHook;
}

/** Session bookkeeping, not instrument changes: never audited (their bodies are the login itself). */
export const UNAUDITED_OPERATIONS: ReadonlySet<string> = new Set(['authenticate', 'renew-token', 'logout']);

/** Every non-GET request changes the instrument, except the session's own. */
export function isAudited(spec: Pick<RequestSpec, 'method' | 'operation'>): boolean {
  return spec.method !== 'GET' && !UNAUDITED_OPERATIONS.has(spec.operation);
}

/** What the audit hook is told before a request is sent (the token is never part of it). */
export interface AuditedRequest {
  api: Api;
  method: HttpMethod;
  path: string;
  operation: string;
  query?: Record<string, string>;
  body?: unknown;
  /** The body exactly as sent (JSON text), for its digest. */
  payload?: string;
}

export type AuditResult = 'applied' | 'refused' | 'unknown' | 'not-sent';

export interface AuditOutcome {
  result: AuditResult;
  status?: number;
  reason?: string;
  attempts?: number;
}

/** An intent record as the transport holds it: its id now, and `durable` settling once it is on disk (or in Redis). */
export interface AuditIntent {
  id: string;
  durable: Promise<unknown>;
}

/**
 * The audit trail as the transport sees it. `intent` seals the intent record and returns at once; nothing of the
 * request goes out before its `durable` resolves (the request is prepared meanwhile, its socket assigned only after),
 * and a failing trail stops the request. `outcome` is called as soon as the answer is known, linked by the intent's
 * id, and not waited on by the caller. The order of the records is the trail's (src/audit/outcome-order.ts: an
 * outcome after the caller's next step, before the chain's next intent); the transport has no ordering code.
 */
export interface AuditHook {
  intent(request: AuditedRequest): AuditIntent;
  outcome(id: string, operation: string, outcome: AuditOutcome): Promise<void>;
  /** Makes every record written so far durable (outcome records may wait for a later fsync otherwise). */
  flush?(): Promise<void>;
}

/**
 * The outcome of one request as a reachability observer sees it (the lh-server's shared connection state): answered
 * (`error` undefined, or an LhError with a status code) or not. `sent` numbers the requests in the order they were
 * sent; `latest` is the highest number sent when this outcome was known, so requests that were already under way
 * when a failure became known can be told apart from those sent after it.
 */
export interface RequestObservation {
  api: Api;
  operation: string;
  sent: number;
  latest: number;
  status?: number;
  error?: LhError;
}

export type RequestObserver = (observation: RequestObservation) => void;

export interface RequestSpec {
  api: Api;
  method: HttpMethod;
  /** Path below the API root, with every variable segment already validated and encoded. */
  path: string;
  operation: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A's body media type (B always uses its versioned JSON type). */
  mediaType?: typeof MEDIA_JSON | typeof MEDIA_JSON_PATCH;
  /** Safe to send again after a connection error or 5xx. */
  idempotent: boolean;
  /** On a retried attempt this status means the earlier attempt already did the work. */
  alreadyDoneStatus?: number;
  /**
   * Called before each resend of an idempotent request with the failure of the attempt before: when it throws,
   * nothing more is sent and the request fails with what it threw (an answer whose error may have changed).
   */
  beforeResend?: (failure: LhError) => Promise<void>;
  token?: string;
  /** Sent without a session (password change and recovery of a user who cannot log in). */
  anonymous?: boolean;
  /** The request's total deadline is max(node timeout, minTimeoutMs): logins and long instrument operations. */
  minTimeoutMs?: number;
  /** 'buffer': a 2xx answer's body is returned as the bytes received (files), with the response headers. Default 'json'. */
  responseType?: 'json' | 'buffer';
  /** The Accept header, instead of the API's JSON type (e.g. 'application/pdf'). */
  accept?: string;
  /** A lower cap on this answer's body than the transport's (a camera image): reading stops past it. */
  maxResponseBytes?: number;
  /**
   * A 2xx body that is not JSON, read by this instead (trimmed): undefined refuses it as not JSON. For an answer a real
   * instrument may send as a bare word (`Idle` as text/plain where the observed answer is the JSON string `"Idle"`).
   */
  bareWord?: (text: string) => unknown;
  /**
   * A 2xx answer nested deeper than MAX_ANSWER_DEPTH: refused (default), or `cut`: the values that deep replaced by
   * TOO_DEEP. Cut for the reads that watch the instrument (its errors and error records, the run status, the run
   * records): refused, one deep field would hide every error listed, or a run's end, for as long as it is shown.
   */
  deepAnswer?: 'refuse' | 'cut';
}

/** The longest delay setTimeout keeps (2^31-1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay setTimeout can hold: longer ones are clamped instead of overflowing into an immediate call. */
export function timerDelay(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, Number.isFinite(ms) ? ms : MAX_TIMER_MS));
}

export interface ApiResponse<T> {
  status: number;
  data: T;
  attempts: number;
  /** The response headers (names in lower case): only with responseType 'buffer'. */
  headers?: Record<string, string>;
}

const TLS_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

function lowerScheme(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:/i, (scheme) => scheme.toLowerCase());
}

/** One keep-alive HTTP client per instrument; knows the two API roots, their media types and what may be retried. */
export class Transport {
  readonly baseUrl: string;
  readonly instrumentUrl?: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;
  private readonly http: InstrumentHttp;
  private readonly pendingDelays = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly inFlight = new Set<Attempt>();
  private readonly audit?: AuditHook;
  /** Audited requests from their intent until their outcome record is written. */
  private readonly outcomes = new PendingWork();
  private readonly observers = new Set<RequestObserver>();
  private sentCount = 0;
  private closed = false;

  constructor(options: TransportOptions) {
    // the scheme in lower case: the agent is chosen by it (an HTTPS:// URL given the http agent fails every request)
    this.baseUrl = lowerScheme(trimBase(options.baseUrl));
    this.instrumentUrl = options.instrumentUrl ? lowerScheme(trimBase(options.instrumentUrl)) : undefined;
    this.timeoutMs = options.timeoutMs ?? 10000;
    this.retries = options.retries ?? 2;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 200;
    this.audit = options.audit;
    this.http = new InstrumentHttp({
      maxSockets: options.maxSockets ?? 16,
      tls: options.tls,
      maxResponseBytes: this.maxResponseBytes,
      maxRequestBytes: MAX_BODY_BYTES,
    });
  }

  urlFor(api: Api, path: string): string {
    if (api === 'A') return `${this.baseUrl}${A_ROOT}${path}`;
    if (!this.instrumentUrl) {
      throw new LhError('no instrument URL is configured for interface B on the lh-server node', {
        kind: 'config',
        operation: path,
      });
    }
    return `${this.instrumentUrl}${B_ROOT}${path}`;
  }

  async request<T>(spec: RequestSpec): Promise<ApiResponse<T>> {
    checkRequestBody(spec);
    const url = this.urlFor(spec.api, spec.path);
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (payload !== undefined && Buffer.byteLength(payload) > MAX_BODY_BYTES) {
      throw new LhError(
        `msg.payload is too large for ${spec.operation}: ${Buffer.byteLength(payload)} bytes (the limit is ${MAX_BODY_BYTES})`,
        { kind: 'validation', operation: spec.operation, field: 'payload' },
      );
    }
    if (!this.audit || !isAudited(spec)) return this.observed(spec, this.attempts<T>(spec, url, payload));
    this.assertOpen(spec.operation);
    const audit = this.audit;
    const notWritten = (err: unknown): LhError =>
      new LhError(`${spec.operation} was not sent: its audit record could not be written (${(err as Error).message})`, {
        kind: 'config',
        operation: spec.operation,
      });
    let intent: AuditIntent;
    try {
      intent = audit.intent({
        api: spec.api,
        method: spec.method,
        path: spec.path,
        operation: spec.operation,
        query: cleanQuery(spec.query),
        body: spec.body,
        payload,
      });
    } catch (err) {
      throw notWritten(err);
    }
    // The request is prepared while the intent is made durable; its first byte waits for it (see Attempt).
    const gate = new AuditGate(intent.durable, notWritten);
    // The outcome goes to the chain once the answer is known; the chain appends it after the caller's next step and
    // before its next intent (src/audit/outcome-order.ts), and nobody waits for it to be durable: the flow gets the
    // answer one fsync sooner. A crash before that fsync leaves the intent without its outcome, which verify and every
    // reader take as "unknown", never as applied. An intent that could not be written gets no outcome (nothing was
    // sent; the trail refuses every later record anyway).
    // Tracked from the moment it is sent, so close() also waits for the outcome of a request it aborts. One that the
    // deadline or close() ended while its intent was being made durable never left: not-sent.
    const sent = this.observed(spec, this.attempts<T>(spec, url, payload, gate));
    const record = (outcome: AuditOutcome | undefined): Promise<void> =>
      outcome ? audit.outcome(intent.id, spec.operation, outcome) : Promise.resolve();
    this.outcomes.add(
      sent.then(
        (res) => record(auditOutcomeOf(res)),
        // not-sent also when every attempt past the gate ended (deadline, close()) before anything of it left
        (err: unknown) => record(gate.written ? auditOutcomeOfError(err, gate.passed && gate.reached) : undefined),
      ),
    );
    return sent;
  }

  /**
   * Calls `observer` with the outcome of every request sent from now on, before the caller gets it (a listener that
   * throws is ignored). Nothing is reported after close(). Returns the function that stops the calls.
   */
  observe(observer: RequestObserver): () => void {
    this.observers.add(observer);
    return () => {
      this.observers.delete(observer);
    };
  }

  /**
   * A request of `api` that could not go because the instrument failed to answer before (a login spaced out after one
   * that got no answer): observers count it as the failure sending it would have met, so an instrument that answers
   * nothing still shows offline at the pace of its nodes' requests.
   */
  heldBack(api: Api, operation: string, error: LhError): void {
    if (this.observers.size === 0 || this.closed) return;
    const seq = ++this.sentCount;
    this.tell({ api, operation, sent: seq, latest: seq, status: error.statusCode, error });
  }

  private tell(observation: RequestObservation): void {
    for (const observer of this.observers) {
      try {
        // an async observer's failure would be an unhandled rejection (which ends the process): caught too
        const returned = observer(observation) as unknown;
        if (returned instanceof Promise) returned.catch(ignore);
      } catch {
        // an observer's failure is its own: the request's outcome goes to its caller unchanged
      }
    }
  }

  /** Without observers the request is returned as it is: no work is added to the path of a request. */
  private observed<T>(spec: RequestSpec, sent: Promise<ApiResponse<T>>): Promise<ApiResponse<T>> {
    if (this.observers.size === 0) return sent;
    const seq = ++this.sentCount;
    const report = (status?: number, error?: LhError): void => {
      if (this.closed) return;
      this.tell({ api: spec.api, operation: spec.operation, sent: seq, latest: this.sentCount, status, error });
    };
    sent.then(
      (res) => report(res.status),
      (err: unknown) => {
        if (err instanceof LhError) report(err.statusCode, err);
      },
    );
    return sent;
  }

  /** Resolves once every audited request so far has its outcome record written and durable (or given up on). */
  async outcomesWritten(): Promise<void> {
    await this.outcomes.settled();
    await this.audit?.flush?.().catch(ignore);
  }

  /** `gate`: nothing is sent before it opens (an audited request's intent record durable); it failing ends the request. */
  private async attempts<T>(
    spec: RequestSpec,
    url: string,
    payload: string | undefined,
    gate?: AuditGate,
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {
      Accept: spec.accept ?? (spec.api === 'B' ? MEDIA_VECTOR : MEDIA_JSON),
    };
    const binary = spec.responseType === 'buffer';
    // no body, no Content-Type (as the tested client sends pause, resume, abort, cleanup)
    if (payload !== undefined) headers['Content-Type'] = spec.api === 'B' ? MEDIA_VECTOR : (spec.mediaType ?? MEDIA_JSON);
    if (spec.token) headers.Authorization = `Bearer ${spec.token}`;
    // a value axios would strip silently (and Node refuse): a config error before anything is sent, never retried
    const unsendable = unsendableHeader(headers);
    const query = cleanQuery(spec.query);
    const maxAttempts = spec.idempotent ? this.retries + 1 : 1;
    // One deadline for the whole request, retries included: a caller (a poll) never waits longer than it.
    const deadlineMs = Math.max(this.timeoutMs, spec.minTimeoutMs ?? 0);
    const maxResponseBytes = Math.min(this.maxResponseBytes, spec.maxResponseBytes ?? Infinity);
    let endAt = Date.now() + deadlineMs;
    /** whether an attempt so far may have reached the instrument (past the gate, not ended before anything left) */
    let reached = false;
    for (let attempt = 1; ; attempt++) {
      this.assertOpen(spec.operation);
      let failure: LhError;
      /** this attempt, once started (its end tells whether anything of it can have left) */
      let started: Attempt | undefined;
      try {
        // the wall clock set back since the first attempt: this attempt would hang for the step's length on an
        // instrument that stopped answering, and retries follow it (a request so ends within two deadlines)
        endAt = withinSpan(endAt, Date.now(), deadlineMs);
        const left = Math.max(1, endAt - Date.now());
        const raw = await this.withinDeadline(left, async (one) => {
          const current = one;
          started = one;
          // an audited request: nothing of it goes out before its intent record is durable
          if (gate) {
            await gate.durable;
            if (current.ended) throw current.ended;
            gate.passed = true;
          }
          if (unsendable) throw unsendable;
          return this.http.send({
            url,
            query,
            method: spec.method,
            headers,
            body: payload,
            bind: (req) => current.bind(req),
            timeoutMs: timerDelay(left),
            maxResponseBytes,
          });
        });
        if (binary && raw.status >= 200 && raw.status < 300) {
          return { status: raw.status, data: raw.body as T, attempts: attempt, headers: raw.headers };
        }
        const res = textOf(raw);
        if (res.status >= 200 && res.status < 300) {
          return { status: res.status, data: parseBody<T>(res, spec, url), attempts: attempt };
        }
        if (attempt > 1 && spec.alreadyDoneStatus === res.status) {
          return { status: res.status, data: undefined as T, attempts: attempt };
        }
        failure = httpError(res, spec, url);
      } catch (err) {
        if (this.closed)
          failure = new LhError('the connection to the instrument was closed', { kind: 'network', operation: spec.operation });
        else if (isAnswerTooLarge(err)) failure = tooLarge(spec, url, maxResponseBytes);
        else if (gate && !gate.passed && err instanceof DeadlineExceeded) failure = notDurableInTime(spec, deadlineMs);
        else failure = err instanceof LhError ? err : networkError(err, spec, url, deadlineMs);
      }
      failure.attempts = attempt;
      if ((!gate || gate.passed) && !started?.neverSent) reached = true;
      if (gate && reached) gate.reached = true;
      if (!reached) NEVER_SENT.add(failure); // the failure a caller gets says so (neverReached), as the audit trail does
      // closed: no retry (its wait would hold the caller for a back-off after close(), and then fail anyway)
      if (attempt >= maxAttempts || this.closed || !isRetryable(failure)) throw failure;
      const wait = this.retryBaseDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
      if (Date.now() + wait >= endAt) throw failure;
      await this.delay(wait);
      if (spec.beforeResend) await spec.beforeResend(failure);
    }
  }

  /**
   * Runs one attempt under the request's total deadline: axios's own timeout bounds the wait for the answer to start
   * and between two bytes, so a body trickled byte by byte would not end by it alone. The deadline and close() end the
   * attempt through its AbortSignal (axios destroys the request and rejects at once).
   */
  private withinDeadline<R>(deadlineMs: number, attempt: (current: Attempt) => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      // end() rejects at once: a request still queued behind maxSockets has no socket, so destroying it emits
      // nothing until a socket frees up (the request holding it may have a far longer deadline).
      const current = new Attempt((reason) => {
        clearTimeout(timer);
        this.inFlight.delete(current);
        reject(reason);
      });
      const timer = setTimeout(() => current.end(new DeadlineExceeded()), timerDelay(deadlineMs));
      this.inFlight.add(current);
      attempt(current).then(
        (value) => {
          clearTimeout(timer);
          this.inFlight.delete(current);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          this.inFlight.delete(current);
          reject(current.ended ?? err);
        },
      );
    });
  }

  /** Destroys every socket and cancels retry waits; the transport cannot be used afterwards. */
  close(): void {
    this.closed = true;
    for (const attempt of this.inFlight) attempt.end(new Error('the connection to the instrument was closed'));
    this.inFlight.clear();
    for (const pending of this.pendingDelays) {
      clearTimeout(pending.timer);
      pending.resolve();
    }
    this.pendingDelays.clear();
    this.http.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new LhError('the connection to the instrument was closed', { kind: 'network', operation });
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const pending = {
        resolve,
        timer: setTimeout(() => {
          this.pendingDelays.delete(pending);
          resolve();
        }, ms),
      };
      this.pendingDelays.add(pending);
    });
  }
}

/** An answer: applied, unless a result wrapper says `success: false` (the instrument refused in a 200). */
export function auditOutcomeOf(res: ApiResponse<unknown>): AuditOutcome {
  const data = res.data as { success?: unknown; message?: unknown } | undefined;
  if (typeof data === 'object' && data !== null && data.success === false) {
    return {
      result: 'refused',
      status: res.status,
      reason: typeof data.message === 'string' ? data.message : 'success: false',
      attempts: res.attempts,
    };
  }
  return { result: 'applied', status: res.status, attempts: res.attempts };
}

/**
 * Whether a request that failed so was never sent: no connection was made (refused, host not found or unreachable) on
 * its only attempt, or Node refused a header value before connecting. Such a write cannot have reached the instrument.
 */
export function neverReached(err: unknown): boolean {
  if (!(err instanceof LhError)) return false;
  return NEVER_SENT.has(err) || ((err.attempts ?? 1) <= 1 && NOT_CONNECTED.has(String(err.code)));
}

/**
 * Failures of requests no attempt of which can have left (an audited one ended, by its deadline or close(), while its
 * intent was being made durable; one ended before its socket connected): as its audit outcome says, not-sent.
 */
const NEVER_SENT = new WeakSet<LhError>();

/**
 * A failure: refused when the instrument answered 4xx; not-sent when no connection was made, or when the request never
 * got past its audit gate (`passed` false: ended while its intent was being made durable); unknown otherwise (a
 * timeout, a reset, a 5xx: the instrument may have done it), never applied.
 */
export function auditOutcomeOfError(err: unknown, passed = true): AuditOutcome {
  const e = err instanceof LhError ? err : undefined;
  const reason = err instanceof Error ? err.message : String(err);
  const attempts = e?.attempts;
  if (!passed) return { result: 'not-sent', reason, attempts };
  if (e?.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500)
    return { result: 'refused', status: e.statusCode, reason, attempts };
  if (e && (e.kind === 'tls' ? (attempts ?? 1) <= 1 : neverReached(e))) return { result: 'not-sent', reason, attempts };
  return { result: 'unknown', ...(e?.statusCode !== undefined ? { status: e.statusCode } : {}), reason, attempts };
}

/** Node's codes for a header value it will not send (found before any connection, see unsendableHeader). */
const UNSENDABLE_HEADER = new Set(['ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE']);

const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', ...UNSENDABLE_HEADER]);

/**
 * Refuses, before anything is sent, a body that JSON would not carry as given or that no write may carry: a prototype
 * key anywhere (`__proto__`, `constructor`, `prototype`), NaN or Infinity (JSON sends null), a bigint, function or
 * symbol, a cycle, a nesting too deep, or one too large to be under the body limit. The error names the field.
 */
export function checkRequestBody(spec: Pick<RequestSpec, 'body' | 'operation'>): void {
  const problem = bodyProblem(spec.body, MAX_BODY_BYTES);
  if (problem === undefined) return;
  throw validationError(spec.operation, problem.path, problem.rule, problem.value);
}

/** An answer with its body as text (UTF-8, a byte order mark left out, as a .NET service may send one). */
interface TextAnswer {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  data: string;
}

function textOf(answer: HttpAnswer): TextAnswer {
  const text = answer.body.toString('utf8');
  return {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers,
    data: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text,
  };
}

function tooLarge(spec: RequestSpec, url: string, limit: number): LhError {
  return new LhError(
    `${spec.operation}: ${describeTarget(spec)} at ${url} answered with a body larger than ${limit} bytes, the limit of an answer; nothing of it was used`,
    { kind: 'response', operation: spec.operation },
  );
}

/** The deadline passed while the request waited for its intent record: the instrument was never asked. */
function notDurableInTime(spec: RequestSpec, deadlineMs: number): LhError {
  return new LhError(
    `${spec.operation} was not sent: its audit record was not on disk within ${deadlineMs} ms (a slow or stalled disk)`,
    { kind: 'timeout', operation: spec.operation },
  );
}

/** An audited request's gate: `durable` settles once its intent record is; `passed` once an attempt went past it. */
class AuditGate {
  /** false once the intent record could not be written (then the request gets no outcome record either) */
  written = true;
  passed = false;
  /** false while no attempt past the gate may have reached the instrument (each ended before anything left) */
  reached = false;
  readonly durable: Promise<void>;
  constructor(intentDurable: Promise<unknown>, notWritten: (err: unknown) => LhError) {
    this.durable = intentDurable.then(ignore, (err: unknown) => {
      this.written = false;
      throw notWritten(err);
    });
  }
}

/** One attempt, so that the deadline or close() can end it: ending destroys its request (axios rejects at once). */
class Attempt {
  ended?: Error;
  /**
   * Set when it ended: nothing of it can have left (its request not made yet, still queued behind maxSockets without a
   * socket, or its socket still connecting): destroyed, such a request is never written, even once a socket frees up.
   */
  neverSent = false;
  private req?: http.ClientRequest;
  constructor(private readonly onEnd: (reason: Error) => void) {}

  /** The attempt's request, once axios made it: destroyed at once when the attempt ended before. */
  bind(req: http.ClientRequest): void {
    if (this.ended) req.destroy(this.ended);
    else this.req = req;
  }

  end(reason: Error): void {
    if (this.ended) return;
    this.ended = reason;
    const socket = this.req?.socket;
    this.neverSent = !socket || socket.connecting;
    this.req?.destroy(reason);
    this.req = undefined;
    this.onEnd(reason);
  }
}

/** Node's rule for a header value (what axios would strip silently): tab, visible ASCII, Latin-1. */
const UNSENDABLE_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** An error like Node's for the first header whose value cannot be sent (it names the header, never the value). */
function unsendableHeader(headers: Record<string, string>): (Error & { code: string }) | undefined {
  for (const name of Object.keys(headers)) {
    if (UNSENDABLE_HEADER_VALUE.test(headers[name])) {
      return Object.assign(new Error(`Invalid character in header content ["${name}"]`), { code: 'ERR_INVALID_CHAR' });
    }
  }
  return undefined;
}

function ignore(): void {
  // nothing to do
}

class DeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('deadline exceeded');
  }
}

/** The query's set values as texts; undefined when none is set. */
function cleanQuery(query: RequestSpec['query']): Record<string, string> | undefined {
  if (!query) return undefined;
  let out: Record<string, string> | undefined;
  for (const k of Object.keys(query)) {
    const v = query[k];
    if (v !== undefined) (out ??= {})[k] = String(v);
  }
  return out;
}

function isRetryable(err: LhError): boolean {
  return isUnreachable(err);
}

function describeTarget(spec: RequestSpec): string {
  return spec.api === 'A' ? 'the preparation service (A)' : 'the instrument control interface (B)';
}

function contentTypeOf(res: TextAnswer): string {
  const raw = res.headers['content-type'];
  return typeof raw === 'string' ? raw.toLowerCase() : '';
}

function parseBody<T>(res: TextAnswer, spec: RequestSpec, url: string): T {
  const text = typeof res.data === 'string' ? res.data : '';
  if (res.status === 204 || text.trim() === '') return undefined as T;
  if (contentTypeOf(res).includes('text/html') || /^\s*</.test(text)) {
    throw new LhError(
      `${spec.operation}: ${describeTarget(spec)} at ${url} answered with an HTML page instead of JSON; check the URL in the lh-server node`,
      { kind: 'response', operation: spec.operation, statusCode: res.status, body: keptOf(text, 500, spec) },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const word = spec.bareWord?.(text.trim());
    if (word !== undefined) return word as T;
    throw new LhError(`${spec.operation}: ${describeTarget(spec)} answered with text that is not JSON`, {
      kind: 'response',
      operation: spec.operation,
      statusCode: res.status,
      body: keptOf(text, 500, spec),
    });
  }
  if (nestsDeeper(parsed, MAX_ANSWER_DEPTH)) {
    if (spec.deepAnswer === 'cut') return normaliseKeys(cutDeeper(parsed, MAX_ANSWER_DEPTH)) as T;
    throw new LhError(
      `${spec.operation}: ${describeTarget(spec)} answered JSON nested deeper than ${MAX_ANSWER_DEPTH} levels, deeper ` +
        'than any answer of the instrument: refused, as Node-RED could not carry it in a msg',
      { kind: 'response', operation: spec.operation, statusCode: res.status, body: keptOf(text, 500, spec) },
    );
  }
  return normaliseKeys(parsed) as T;
}

/**
 * Where a redirect leads, as a refusal names it: scheme, host and path, never its query or fragment (a camera or file
 * service redirecting to a pre-signed URL puts the credential there, `?X-Amz-Signature=…`, `?sig=…`, which the
 * redaction step does not know) nor its userinfo; clipped. Enough to put the final URL in the lh-server node. Read as
 * a client following it reads it (WHATWG URL, against the request's URL): a password holding `@` ends at the last one,
 * `https:\\user:pw@host` is `https://`; one that reads as no URL is not quoted at all.
 */
function whereTo(location: string, url: string): string {
  let target: URL;
  try {
    target = new URL(location, url);
  } catch {
    return 'an address that is not a URL';
  }
  const rest = `${target.search ? '?…' : ''}${target.hash ? '#…' : ''}`;
  const bare = `${target.protocol}${target.host ? `//${target.host}` : ''}${target.pathname}`;
  return `${bare.length > 300 ? `${bare.slice(0, 300)}…` : bare}${rest}`;
}

/**
 * What an error keeps of an answer's text: its start, never cut inside a secret the request carried (its token, a
 * login's password, a new password), which the redaction step at the node's edge would no longer recognise once cut.
 */
function keptOf(text: string, max: number, spec: RequestSpec): string {
  if (text.length <= max) return text;
  const secrets = secretsIn(spec.body);
  if (spec.token) secrets.push(spec.token);
  return clipOutside(text, max, secrets);
}

function httpError(res: TextAnswer, spec: RequestSpec, url: string): LhError {
  const text = typeof res.data === 'string' ? res.data : '';
  let body: unknown = keptOf(text, 2000, spec);
  let detail = '';
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.location;
    return new LhError(
      `${spec.operation}: ${url} redirects to ${typeof location === 'string' ? whereTo(location, url) : 'another address'}; ` +
        'redirects are not followed so credentials never leave the configured host: put the final URL in the lh-server node',
      { kind: 'http', operation: spec.operation, statusCode: res.status },
    );
  }
  if (!contentTypeOf(res).includes('text/html')) {
    try {
      body = normaliseKeys(JSON.parse(text));
      detail = problemDetail(body);
    } catch {
      detail = text.length > 0 && text.length < 200 ? text : '';
    }
  }
  const reason = detail || res.statusText || 'request failed';
  const kind = res.status === 401 || res.status === 403 || res.status === 423 ? 'auth' : 'http';
  return new LhError(`${spec.operation} failed: ${res.status} ${reason}`, {
    kind,
    operation: spec.operation,
    statusCode: res.status,
    body,
  });
}

function problemDetail(body: unknown): string {
  if (typeof body === 'string') return body;
  if (typeof body !== 'object' || body === null) return '';
  const b = body as Record<string, unknown>;
  const parts: string[] = [];
  // `newPassword (The new password must have…)`, not `newPassword: …`: the redaction step every text leaving a node
  // passes reads `name: value` under a secret's name as a secret, and would keep only `newPassword: ***`
  const fields = typeof b.errors === 'object' && b.errors !== null ? Object.entries(b.errors as Record<string, unknown>) : [];
  const said = fields.map(([field, msgs]) => [field, Array.isArray(msgs) ? msgs.join(' ') : String(msgs)] as const);
  /** A detail that only repeats a field's error as `field: message` (as ASP.NET writes it): said below. */
  const repeats = (text: string): boolean => said.some(([field, msg]) => text === `${field}: ${msg}`);
  if (typeof b.title === 'string') parts.push(b.title);
  if (typeof b.detail === 'string' && b.detail !== b.title && !repeats(b.detail)) parts.push(b.detail);
  if (typeof b.message === 'string' && parts.length === 0) parts.push(b.message);
  for (const [field, msg] of said) parts.push(`${field} (${msg})`);
  return parts.join(': ');
}

function networkError(err: unknown, spec: RequestSpec, url: string, timeoutMs: number): LhError {
  const e = err as Error & { code?: string; cause?: unknown };
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  const where = `${describeTarget(spec)} at ${url}`;
  const https = /^https:/i.test(url);
  if (code !== undefined && UNSENDABLE_HEADER.has(code)) {
    // Node refused a header value before anything was sent (its message names the header, never the value): a token
    // holding a line break or a character outside Latin-1. Not the network: no retry, the instrument is not offline.
    return new LhError(
      `${spec.operation}: not sent to ${where}: ${e.message}; a token with a line break or a character outside Latin-1 ` +
        'cannot be sent (check the instrument token in the lh-server node)',
      { kind: 'config', operation: spec.operation, code },
    );
  }
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || err instanceof DeadlineExceeded || /timeout/i.test(e.message ?? '')) {
    return new LhError(`${spec.operation}: no complete answer from ${where} within ${timeoutMs} ms`, {
      kind: 'timeout',
      operation: spec.operation,
      code,
    });
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    // the chain is trusted (Node checks the name only after it): the certificate is made out to another name than
    // the URL's host, as a self-signed instrument certificate reached by its IP address is
    const names = certificateNames(e.cause ?? e);
    return new LhError(
      `${spec.operation}: the TLS certificate of ${where} is trusted but made out to ${names ?? 'other names'}, ` +
        `not to ${hostOf(url)} (${code}). Enter a name the certificate lists as Server name in the TLS configuration ` +
        'node on the lh-server node (or use that name in the URL), or, only on a trusted network, switch certificate ' +
        'verification off there',
      { kind: 'tls', operation: spec.operation, code },
    );
  }
  if (https && plainHttpAnswer(code, e.message)) {
    // the server answered the TLS hello in plain text (an HTTP 400, as most servers do): not a certificate to trust
    return new LhError(
      `${spec.operation}: ${where} did not answer in TLS (${code}: wrong version number): the server there speaks plain ` +
        (spec.api === 'A'
          ? 'HTTP: write the base URL with http:// (interface A is served over HTTP), or check its port'
          : 'HTTP, not the HTTPS interface B is served over: check the host and port of the instrument URL'),
      { kind: 'tls', operation: spec.operation, code },
    );
  }
  if (code && TLS_CODES.has(code)) {
    return new LhError(
      `${spec.operation}: the TLS certificate of ${where} is not trusted (${code}: ${e.message}). ` +
        "Add the instrument's CA certificate (for a self-signed certificate, the certificate itself) in a TLS " +
        'configuration node on the lh-server node, ' +
        'or, only on a trusted network, switch certificate verification off there',
      { kind: 'tls', operation: spec.operation, code },
    );
  }
  const reason = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'host not found' : e.message;
  // closed before TLS was set up: a server that speaks plain HTTP there and drops a TLS hello, most often
  const hint =
    https && /before secure TLS connection/i.test(e.message ?? '')
      ? spec.api === 'A'
        ? ': the server there may speak plain HTTP (interface A is served over HTTP: an http:// base URL?)'
        : ': the server there may not speak HTTPS (check the host and port of the instrument URL)'
      : '';
  return new LhError(`${spec.operation}: cannot reach ${where} (${reason})${hint}`, {
    kind: 'network',
    operation: spec.operation,
    code,
  });
}

/**
 * Whether a TLS failure is the server answering the hello in plain text (OpenSSL: "wrong version number", or a record
 * "packet length too long" when the text's first bytes read as a length): an http:// server on an https:// URL.
 */
function plainHttpAnswer(code: string | undefined, message: string | undefined): boolean {
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') return true;
  return code === 'EPROTO' && /wrong version number|packet length too long/i.test(message ?? '');
}

/** The names a peer certificate is made out to (its subject alternative names, else its CN), for a message; at most 200 characters. */
function certificateNames(err: unknown): string | undefined {
  const cert = (err as { cert?: { subjectaltname?: unknown; subject?: { CN?: unknown } } } | undefined)?.cert;
  const alt = typeof cert?.subjectaltname === 'string' ? cert.subjectaltname : '';
  // DNS and IP entries only (the ones a host is checked against); `DNS:a, IP Address:10.0.0.5`
  const names = alt
    .split(',')
    .map((entry) => /^\s*(?:DNS|IP Address):(.+)$/.exec(entry)?.[1].trim())
    .filter((name): name is string => name !== undefined && name !== '');
  const cn = cert?.subject?.CN;
  const list = names.length > 0 ? names : typeof cn === 'string' && cn !== '' ? [cn] : [];
  if (list.length === 0) return undefined;
  const text = list.map((n) => `"${n}"`).join(', ');
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The host of a URL as the certificate was checked against. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "the URL's host";
  }
}
