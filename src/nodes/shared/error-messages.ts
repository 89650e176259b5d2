import { type InstrumentError, MAX_FRAME_DEPTH, type PendingError, TOO_DEEP } from '../../client';
import { describeActions, type InstrumentInfo, offeredActions, responseNames } from './error-records';
import { oneLine } from './one-line';
import {
  type ConnectionMsg,
  DEFAULT_NOTIFICATION,
  type ErrorSource as Source,
  type InstrumentErrorFields,
  type PendingErrorFields,
  type PolledError,
  type RaisedErrorMsg,
  type ResolvedErrorMsg,
} from './poll-messages';
import { redact } from './redaction';
import { renderTemplate } from './typed-inputs';
import { instantOf, localDateTime } from './zoned-time';

export { DEFAULT_NOTIFICATION, errorKey } from './poll-messages';

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** `2026-01-31 12:00:00` in the Node-RED host's time zone; the raw text when it is not a date. */
export function formatTime(value: unknown): string {
  const raw = text(value);
  const d = instantOf(raw);
  if (raw === '' || Number.isNaN(d.getTime())) return raw;
  return localDateTime(d);
}

/** Fields handy in the notification template, besides the whole record as `error` and the msg itself. */
export function templateView(source: Source, record: PolledError, instrument: InstrumentInfo): Record<string, unknown> {
  const actions = source === 'B' ? (offeredActions(record) ?? []) : [];
  const responses = source === 'A' ? responseNames(record.errorResponses).join(', ') : describeActions(actions);
  const rawTime = source === 'A' ? (record.timeStamp ?? record.date) : (record.date ?? record.timeStamp);
  return {
    ...record,
    error: record,
    source,
    instrument,
    id: source === 'A' ? record.id : record.uuid,
    title: text(record.title) || text(record.type) || 'Runtime error',
    message: text(record.message),
    severity: text(record.severity) || 'Error',
    responses,
    actions: describeActions(actions),
    time: formatTime(rawTime),
    timeIso: text(rawTime),
  };
}

/** The msg's topic: instrument, severity and title on one line, through the redaction step (the package's text). */
function summary(view: Record<string, unknown>): string {
  const instrument = view.instrument as InstrumentInfo;
  return redact(oneLine(`${instrument.name}: ${text(view.severity)} ${text(view.title)}`));
}

/**
 * The fields that say which error it is: A by errorId (and groupId), B by uuid; and a copy of the record as
 * msg.payload: the node's memory holds the record itself, and a node on the first wire gets the msg as sent (Node-RED
 * copies it only for further wires). Edited there in place (a title prefixed, "set msg.payload.title"), the remembered
 * error no longer matched the instrument's at the next poll and was reported resolved and raised again as another
 * error under its id (review64).
 */
function identity(source: Source, record: PolledError): PendingErrorFields | InstrumentErrorFields {
  if (source === 'A') {
    const error = recordCopy(record) as PendingError;
    return { source, payload: error, errorId: error.id, groupId: error.groupId };
  }
  const error = recordCopy(record) as InstrumentError;
  return { source, payload: error, uuid: error.uuid };
}

/**
 * A copy of a record (parsed JSON) that cannot throw: a value nested deeper than MAX_FRAME_DEPTH becomes TOO_DEEP, as
 * in an event frame. structuredClone recursed: interface A's answers are not bounded in depth, and a record with a
 * value nested about 2,000 levels deep made it overflow the stack after the memory had taken the error as reported,
 * so its raised msg was dropped (review68). Not JSON (a value a context store may give back): a Date stays a Date,
 * anything else a clone or its text; functions and getters that throw are left out, a cycle ends at the bound.
 */
export function recordCopy(value: unknown, depth = 0): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_FRAME_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v: unknown) => recordCopy(v, depth + 1) ?? null);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    if (value instanceof Date) return new Date(value.getTime());
    try {
      return structuredClone(value);
    } catch {
      return String(value);
    }
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    let v: unknown;
    try {
      v = (value as Record<string, unknown>)[k];
    } catch {
      continue; // a getter that throws: left out
    }
    const copy = recordCopy(v, depth + 1);
    if (copy === undefined && v !== undefined) continue;
    // an own property as JSON.parse makes it: a key "__proto__" assigned would replace the object's prototype
    if (k === '__proto__') Object.defineProperty(out, k, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[k] = copy;
  }
  return out;
}

export function raisedMessage(source: Source, record: PolledError, instrument: InstrumentInfo, template: string): RaisedErrorMsg {
  const view = templateView(source, record, instrument);
  return {
    topic: summary(view),
    event: 'raised',
    ...identity(source, record),
    instrument: { ...instrument }, // the node's own, not the flow's to edit for the next msgs
    // text for people (an e-mail, a chat): what an instrument echoed of a secret into its error is taken out here;
    // msg.payload stays the record as read, the error's identity (README "Security")
    notification: redact(notificationOf(template, view)),
  };
}

/**
 * The notification of a raised error: the node's template rendered over the view, or, where that template cannot be
 * rendered (a tag or section not closed), the default one and a line saying so. Never throws: the msg of the error
 * must go out whatever the template says (the node refuses the template itself at Catch, see lh-error-poll).
 */
export function notificationOf(template: string, view: Record<string, unknown>): string {
  if (template === '') return renderTemplate(DEFAULT_NOTIFICATION, view);
  try {
    return renderTemplate(template, view);
  } catch (err) {
    const why = oneLine(err instanceof Error ? err.message : String(err));
    return `${renderTemplate(DEFAULT_NOTIFICATION, view)}\n(this node's Notification template could not be read and was not used: ${why})`;
  }
}

export function resolvedMessage(source: Source, record: PolledError, instrument: InstrumentInfo): ResolvedErrorMsg {
  const view = templateView(source, record, instrument);
  return {
    topic: `resolved: ${summary(view)}`,
    event: 'resolved',
    ...identity(source, record),
    instrument: { ...instrument },
    resolvedAt: new Date().toISOString(),
  };
}

export function connectionMessage(
  state: 'online' | 'offline',
  instrument: InstrumentInfo,
  details: { failedPolls: number; reason?: string; interfaces?: Source[] },
): ConnectionMsg {
  return {
    topic: `${instrument.name} is ${state}`,
    payload: {
      state,
      instrument: instrument.name,
      since: new Date().toISOString(),
      failedPolls: details.failedPolls,
      ...(details.reason ? { reason: redact(details.reason) } : {}),
      ...(details.interfaces ? { interfaces: details.interfaces } : {}),
    },
    event: state,
    instrument: { ...instrument },
  };
}
