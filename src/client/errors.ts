export type LhErrorKind =
  | 'validation'
  | 'http'
  | 'network'
  | 'timeout'
  | 'tls'
  | 'auth'
  | 'instrument'
  | 'config'
  | 'response'
  /** the error was answered by someone else (or the package cannot prove its own answer was the one applied) */
  | 'already-answered'
  /** the instrument now lists another error under the id that was answered: nothing was sent */
  | 'changed'
  /** refused before anything was sent: a run is in progress, or another start on this instrument is under way */
  | 'busy'
  /** the instrument lists several different errors under the id answered: it cannot tell which; nothing was sent */
  | 'ambiguous';

export interface LhErrorInit {
  kind: LhErrorKind;
  operation: string;
  statusCode?: number;
  body?: unknown;
  field?: string;
  code?: string;
  attempts?: number;
}

/** The shape users see in `msg.error`. */
export interface MsgError {
  message: string;
  statusCode?: number;
  operation: string;
  body?: unknown;
  field?: string;
  kind: LhErrorKind;
}

export class LhError extends Error {
  readonly kind: LhErrorKind;
  readonly operation: string;
  readonly statusCode?: number;
  readonly body?: unknown;
  readonly field?: string;
  /** The network error code (ECONNREFUSED, ...) or LH_<KIND>; Node-RED copies it to a Catch node's msg.error.code. */
  readonly code: string;
  attempts: number;

  constructor(message: string, init: LhErrorInit) {
    super(message);
    this.name = 'LhError';
    this.kind = init.kind;
    this.operation = init.operation;
    this.statusCode = init.statusCode;
    this.body = init.body;
    this.field = init.field;
    this.code = init.code ?? `LH_${init.kind.toUpperCase().replace(/-/g, '_')}`;
    this.attempts = init.attempts ?? 1;
    // Node-RED rebuilds msg.error for Catch nodes from message, code, stack and cause only: the details travel as cause.
    Object.defineProperty(this, 'cause', { get: () => this.toMsgError(), enumerable: false, configurable: true });
  }

  toMsgError(): MsgError {
    const out: MsgError = { message: this.message, operation: this.operation, kind: this.kind };
    if (this.statusCode !== undefined) out.statusCode = this.statusCode;
    if (this.body !== undefined) out.body = this.body;
    if (this.field !== undefined) out.field = this.field;
    return out;
  }
}

export function validationError(operation: string, field: string, rule: string, value?: unknown): LhError {
  const shown = value === undefined ? '' : ` (got ${describeValue(value)})`;
  return new LhError(`${field} ${rule}${shown}`, { kind: 'validation', operation, field });
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value);
  }
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * A failure that means the instrument did not answer (no connection, no answer in time, or a 5xx from a server that
 * is not ready), as opposed to an answer that refuses. The transport retries these; a poll counts them towards offline.
 */
export function isUnreachable(err: LhError): boolean {
  if (err.kind === 'network' || err.kind === 'timeout') return true;
  return err.kind === 'http' && err.statusCode !== undefined && err.statusCode >= 500;
}

/** Wraps anything thrown into an LhError so nodes have one shape to report. */
export function asLhError(err: unknown, operation: string): LhError {
  if (err instanceof LhError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new LhError(message, { kind: 'response', operation });
}
