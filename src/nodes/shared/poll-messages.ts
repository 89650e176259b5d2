/**
 * The message contract between lh-error-poll (which emits these messages) and the nodes that answer errors
 * (lh-answer-error, lh-submit-recovery, lh-answer-page, lh-error-policy), in one place: the types of the three
 * outputs, and readers that take an error back out of a msg without casting.
 */
import { type InstrumentError, type PendingError } from '../../client';
import { type InstrumentInfo } from './error-records';

export type { InstrumentInfo } from './error-records';

/** The notification text of a raised error when the node's template is empty (mustache over the error's fields). */
export const DEFAULT_NOTIFICATION =
  '{{instrument.name}}: {{severity}} {{title}}\n{{message}}\nResponses: {{responses}}\nTime: {{time}}';

/** 'A': a pending runtime error of the preparation service; 'B': an unhandled error of the instrument control interface. */
export type ErrorSource = 'A' | 'B';

/** An error as a poll (or a push) lists it. */
export type PolledError = PendingError | InstrumentError;

type ErrorMsgBase = {
  /** One line: "<instrument>: <severity> <title>" ("resolved: …" on output 2). */
  topic: string;
  instrument: InstrumentInfo;
  _msgid?: string;
};

/** A: identified by `errorId` (and `groupId` when the error has one). */
export type PendingErrorFields = {
  source: 'A';
  payload: PendingError;
  errorId: string;
  groupId?: string;
};

/** B: identified by `uuid`. */
export type InstrumentErrorFields = {
  source: 'B';
  payload: InstrumentError;
  uuid: string;
};

/** Output 1 of lh-error-poll: an error that appeared, once per error. */
export type RaisedErrorMsg = ErrorMsgBase &
  (PendingErrorFields | InstrumentErrorFields) & {
    event: 'raised';
    /** The notification template rendered over the error (for e-mail and chat nodes). */
    notification: string;
  };

/** Output 2 of lh-error-poll: an error that is gone (answered, cleared or handled elsewhere), once per error. */
export type ResolvedErrorMsg = ErrorMsgBase &
  (PendingErrorFields | InstrumentErrorFields) & {
    event: 'resolved';
    /** ISO time the poll noticed it. */
    resolvedAt: string;
  };

/** Output 3 of lh-error-poll: the instrument went offline or came back, once per change. */
export type ConnectionMsg = {
  topic: string;
  event: 'online' | 'offline';
  instrument: InstrumentInfo;
  payload: {
    state: 'online' | 'offline';
    instrument: string;
    since: string;
    failedPolls: number;
    reason?: string;
    interfaces?: ErrorSource[];
  };
};

/** What an answering node needs of a raised error. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * msg.payload as a pending error of A: an object with a string `id` and a list of `errorResponses`, or `null` there
 * (a list left null, as an ASP.NET service writes an empty one: the responses are then the ones listed under the id).
 */
export function readPendingError(payload: unknown): PendingError | undefined {
  if (!isObject(payload) || typeof payload.id !== 'string') return undefined;
  if (!Array.isArray(payload.errorResponses) && payload.errorResponses !== null) return undefined;
  return payload as PendingError;
}

/** msg.payload as an unhandled error of B: an object with a string `uuid`. */
export function readInstrumentError(payload: unknown): InstrumentError | undefined {
  if (!isObject(payload) || typeof payload.uuid !== 'string') return undefined;
  return payload as InstrumentError;
}

/** The key that identifies an error within its source (A: `id`, B: `uuid`), the one the answer ledger uses too. */
export function errorKey(source: ErrorSource, record: unknown): string | undefined {
  if (!isObject(record)) return undefined;
  const id = source === 'A' ? record.id : record.uuid;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}
