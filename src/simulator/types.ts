/**
 * Resource shapes served by the simulator (interfaces.md sections 2.x), plus the simulator's own
 * option, fault and log types. Field names are camelCase, as the real ASP.NET service answers.
 */

import type { PolicySettings, SoftwareSettings, StepType } from '../contract/instrument-contract';

export type { ClearResult, PolicySettings, SoftwareSettings, StepType } from '../contract/instrument-contract';
export { STEP_TYPES } from '../contract/instrument-contract';

/** A stored step: the common fields of 2.1 plus any variant fields exactly as the client sent them. */
export interface Step {
  stepType: StepType;
  id: number;
  name: string;
  stepOrder: number;
  disabled: boolean;
  [variantField: string]: unknown;
}

/** What `includeFullStepData=false` returns. */
export interface StepSummary {
  stepType: StepType;
  id: number;
  name: string;
  stepOrder: number;
  disabled: boolean;
}

export interface Protocol {
  id: number;
  name: string;
  steps: Step[];
}

/** 2.2 */
export interface AuthResult {
  userName: string;
  userId: string;
  token: string;
  inactiveLogout: number;
  logoutCountdown: number;
  expiresIn: number;
  passwordExpiresInDays: number;
  notifyPasswordExpiresSoon: boolean;
}

export type Severity = 'Warning' | 'Error' | 'Fatal';

/** An element of `errorResponses` of a pending error (observed shape: an object with a `response` string). */
export interface ErrorResponseOption {
  response: string;
}

/** An element of `errorData` of a pending error: a sub-item (e.g. one channel or one well) answered on its own. */
export interface PendingErrorDataItem {
  id: string;
  description: string;
  /** the responses this item accepts; those of the error itself when the seed gives none */
  errorResponses: ErrorResponseOption[];
  selectedResponse: string | null;
}

/** 2.4: a runtime error waiting for an answer on interface A. */
export interface PendingError {
  id: string;
  title: string;
  message: string;
  errorResponses: ErrorResponseOption[];
  selectedResponse: string | null;
  timeStamp: string;
  severity: Severity;
  groupId: string;
  errorData: PendingErrorDataItem[];
  handled: boolean;
}

/** What tests and the /sim API may give when injecting an A runtime error; every field optional. */
export interface PendingErrorSeed {
  id: string;
  title: string;
  message: string;
  code: number;
  severity: Severity;
  groupId: string;
  /** response names, default ['Retry', 'Abort', 'Ignore'] */
  responses: string[];
  /** sub-items; `responses` of an item defaults to the error's responses */
  errorData: { id: string; description?: string; responses?: string[] }[];
  /** the id may name an earlier error (answered, gone, or still pending: that one is dropped), as after a restart */
  reuseId: boolean;
  /** listed beside the error still pending under the same id (some instruments list two errors under one id) */
  shareId: boolean;
}

/** 2.3: an entry of the error history (GET errors, GET errors/{errorId}). */
export interface ErrorRecord {
  id: string;
  code: number;
  innerError: Record<string, unknown>;
  message: string;
  type: string;
  severity: Severity;
  date: string;
  handledDateTime: string | null;
  handled: boolean;
  responses: string[];
  groupId: string;
  /** the response applied, once answered (absent while pending and when cleared) */
  selectedResponse?: string;
}

export interface ErrorList {
  totalItemCount: number;
  currentOffset: number;
  items: ErrorRecord[];
}

/** 2.7 */
export interface ServiceRoutine {
  id: number;
  name: string | null;
  isRecommended: boolean;
  lastRun: string | null;
}

/** An input an action needs (e.g. a new volume), with its type and range (SiLA-like: required unless said otherwise). */
export interface ErrorActionInput {
  id: number;
  description: string;
  defaultValue?: string;
  /** 'number' (default when a range is given), 'integer' or 'text' */
  type?: 'number' | 'integer' | 'text';
  min?: number;
  max?: number;
  unit?: string;
  /** false: the action may be submitted without it (default true) */
  required?: boolean;
}

/** A part of an instrument error (e.g. one channel of several), answered by a DetailedErrorRecovery of its own. */
export interface ErrorDetail {
  uuid: string;
  title: string;
  message: string;
  actions: ErrorAction[];
}

/** A continuation option of an instrument error (SiLA-like recovery model). */
export interface ErrorAction {
  id: number;
  description: string;
  /** true: a recovery solution (accepted by /recovery); false: any other action (only by /action) */
  isRecovery: boolean;
  isDefault: boolean;
  inputs?: ErrorActionInput[];
}

/**
 * ErrorData of interface B (interfaces.md leaves it open; this is the simulator's definition).
 * It is what GET instrument-errors/unhandled lists.
 */
export interface ErrorData {
  uuid: string;
  title: string;
  message: string;
  severity: Severity;
  date: string;
  source: 'Instrument';
  actions: ErrorAction[];
  defaultActionId: number;
  timeoutSeconds: number;
  /** parts of the error with their own actions (absent when it has none) */
  details?: ErrorDetail[];
}

/** What tests and the /sim API may give when injecting a B error. */
export interface InstrumentErrorSeed {
  uuid: string;
  title: string;
  message: string;
  severity: Severity;
  actions: ErrorAction[];
  defaultActionId: number;
  timeoutSeconds: number;
  details: ErrorDetail[];
}

/** The simulator's record of a B error: ErrorData plus how it was handled. */
export interface InstrumentError extends ErrorData {
  handled: boolean;
  handledAt: string | null;
  /** the key of the handler whose submission was accepted */
  handledBy: string | null;
  selectedActionId: number | null;
  /** the input values of the accepted submission */
  selectedInputs?: { id: number; value: string }[] | null;
  /** the accepted detailed recoveries: per detail uuid, the action and inputs chosen */
  detailedRecoveries?: { uuid: string; selectedActionId: number; inputs: { id: number; value: string }[] }[];
  /** accepted recovery/action submissions for this uuid (exactly-once checks expect 1) */
  acceptedSubmissions: number;
  /** refused submissions (no handler, already handled, unknown action) */
  rejectedSubmissions: number;
}

/** 2.9 */
export interface ResultWrapper<T> {
  data: T | null;
  message: string | null;
  success: boolean;
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: Record<string, string[]>;
  traceId?: string;
}

export interface SimUser {
  username: string;
  password: string;
  passwordExpired?: boolean;
  kbaAnswer?: string;
}

export interface SimulatorOptions {
  /** default '127.0.0.1' */
  host?: string;
  /** interface A (HTTP); 0 = random (default 0) */
  port?: number;
  /** interface B (HTTPS); 0 = random (default 0) */
  httpsPort?: number;
  /** A path prefix such as '/NimbusLite' (default ''); the /sim control API is not under it */
  prefix?: string;
  /** default [{ username: 'admin', password: 'labwire' }] */
  users?: SimUser[];
  /** default 300 */
  tokenLifetimeSeconds?: number;
  /**
   * The claims that date a token: 'iat' (default: iat and exp in milliseconds) or 'nbf' (as ASP.NET's
   * JwtSecurityToken: nbf and exp in whole seconds, no iat).
   */
  tokenClaims?: 'iat' | 'nbf';
  /** the instrument's clock minus the host's, in ms (default 0): the claims a token carries are dated by it */
  clockOffsetMs?: number;
  policy?: Partial<PolicySettings>;
  /** extra static bearer tokens accepted by B (besides A's JWTs) */
  instrumentTokens?: string[];
  /**
   * Spec-only mode: every A body must have exactly the media type interfaces.md names for its operation. Default
   * false: like a real instrument (an ASP.NET service), every A body may be application/json, text/json,
   * application/json-patch+json or any application/*+json. Property names match case-insensitively in both modes.
   */
  strict?: boolean;
  /** @deprecated the inverse of `strict` (used when `strict` is not given): true = the default, false = strict */
  lenientMediaTypes?: boolean;
  /** default true: seeds protocols, settings, service routines */
  seed?: boolean;
  /** default true: serve the websockets {prefix}/instinctevents and {prefix}/instincterrors; false: an instrument without them (404) */
  sockets?: boolean;
  /** B requires a client certificate signed by this CA (PEM), as instruments set up for mutual TLS do */
  clientCa?: string;
  /** protocol runs: simulated seconds per real second (default 1) */
  simulationSpeed?: number;
  /** serve protocolRunState as its name ("Running") instead of its number (4), as some instruments do */
  runStatesAsNames?: boolean;
}

export interface Faults {
  /** 0..1 share of A and B requests answered with statusCode and a problem-details body */
  statusRate?: number;
  /** default 503 */
  statusCode?: number;
  /** 0..1 share whose socket is destroyed without an answer */
  resetRate?: number;
  /** 0..1 share that never get an answer (held until stop/restart or timeoutHoldMs) */
  timeoutRate?: number;
  /** how long a timed-out request is held before its socket is destroyed, default 30000 */
  timeoutHoldMs?: number;
  /** added delay before every A/B answer */
  latencyMs?: number;
  /** default 1; token lifetime and lockTimeout are divided by it */
  clockSpeed?: number;
  /** send an HTML page instead of JSON when a fault status is sent */
  htmlErrors?: boolean;
  /** a rejected login or renewal (4xx) is answered only after this delay (anti-brute-force servers do this) */
  loginRejectionDelayMs?: number;
  /** answers' bodies are sent one byte every trickleMs (a stalled proxy or a dying link) */
  trickleMs?: number;
  /** the rates apply only to requests of these methods (e.g. ['PUT', 'POST']: reads are answered); default all */
  methods?: string[];
}

export interface LoggedRequest {
  api: 'A' | 'B';
  method: string;
  /** without prefix, e.g. /api/v1/errors */
  path: string;
  query: Record<string, string>;
  contentType?: string;
  authorization?: string;
  /** parsed JSON or the raw string ('' when there was no body) */
  body: unknown;
  /** 0 when no answer was sent (reset or timeout fault) */
  status: number;
  time: number;
  host?: string;
  /** the client's source port: tells whether connections were reused (keep-alive) */
  remotePort?: number;
  /** B: the common name of the client certificate, and the ALPN protocol agreed, when there were any */
  clientCertificate?: string;
  alpnProtocol?: string;
}

export interface SimulatorState {
  protocols: Map<number, Protocol>;
  pendingErrors: PendingError[];
  history: ErrorRecord[];
  instrumentErrors: InstrumentError[];
  handlers: Set<string>;
  softwareSettings: SoftwareSettings;
  serviceRoutines: ServiceRoutine[];
  logins: number;
  renewals: number;
  failedLogins: number;
}
