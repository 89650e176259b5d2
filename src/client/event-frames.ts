/**
 * What the instrument's websockets send, made plain: frames are JSON whose values may be JSON inside strings,
 * several levels deep, with PascalCase or camelCase keys. Pure functions, no sockets.
 */
import { createHash } from 'crypto';

import type { ErrorResponseOption, PendingError } from './types';

/** An instrument event as every consumer sees it; `code` is lower case so codes match case-insensitively. */
export interface InstrumentEvent {
  code: string;
  description: string;
  data: unknown;
}

/** Codes the instrument is known to send on `instinctevents` (observed), plus the run codes of this package. */
export const KNOWN_EVENT_CODES = ['messagebox', 'maintenancedata', 'finished', 'runstatus', 'timeremaining'] as const;

/** JSON texts inside strings unwrapped along one path of a frame (a string of a string counts once). */
const MAX_STRING_LEVELS = 8;
/**
 * Levels of objects and arrays kept in a frame; a value deeper is replaced by TOO_DEEP. Node-RED copies a msg for each
 * further wire (and for Catch nodes) with a recursive copy that overflows the stack near 3000 levels: a frame nested
 * deeper (1 MiB holds 500,000 levels) would reach one wire and be lost on the others, silently.
 */
export const MAX_FRAME_DEPTH = 128;
/** What stands for a value nested deeper than MAX_FRAME_DEPTH. */
export const TOO_DEEP = `(nested deeper than ${MAX_FRAME_DEPTH} levels: left out)`;

/** Parses a frame and every JSON text nested in its string values (objects, arrays, or JSON strings of them). */
export function unwrapFrame(frame: string | Buffer): unknown {
  const text = typeof frame === 'string' ? frame : frame.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    return text;
  }
  return unwrapValue(parsed);
}

/**
 * A value with every nested JSON text parsed (up to MAX_STRING_LEVELS along a path, whatever the objects between
 * them); a JSON string inside a string is its text; other strings that are not JSON objects or arrays stay strings;
 * keys start in lower case; values nested deeper than MAX_FRAME_DEPTH become TOO_DEEP.
 */
export function unwrapValue(value: unknown): unknown {
  return unwrapAt(value, 0, 0);
}

function unwrapAt(value: unknown, depth: number, strings: number): unknown {
  if (typeof value === 'string') {
    if (strings >= MAX_STRING_LEVELS) return value;
    const parsed = parseNested(value);
    return parsed === undefined ? value : unwrapAt(parsed, depth, strings + 1);
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_FRAME_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v) => unwrapAt(v, depth + 1, strings));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // an own property as JSON.parse makes it: a key "__proto__" assigned would replace the object's prototype
    Object.defineProperty(out, camel(k), {
      value: unwrapAt(v, depth + 1, strings),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * JSON text of an object or an array, or of a JSON string (a value the instrument encoded once more on its own, e.g.
 * `"\"3fa8…\""`: its text, unwrapped further when it holds JSON again); else undefined (`"42"` stays a string).
 */
function parseNested(text: string): unknown {
  const t = text.trim();
  const first = t[0];
  if (first !== '{' && first !== '[' && first !== '"') return undefined;
  try {
    const parsed = JSON.parse(t) as unknown;
    if (typeof parsed === 'string') return parsed;
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** `{code, description, data}` from an unwrapped frame, whatever the key case; anything else becomes code ''. */
export function normaliseEvent(value: unknown): InstrumentEvent {
  if (!isRecord(value)) return { code: '', description: typeof value === 'string' ? value : '', data: value };
  const code = pick(value, ['code', 'eventCode', 'type', 'eventType']);
  const description = pick(value, ['description', 'message', 'text']);
  const data = pickAny(value, ['data', 'eventData', 'payload']);
  return {
    code: typeof code === 'string' || typeof code === 'number' ? String(code).trim().toLowerCase() : '',
    description: typeof description === 'string' ? description : '',
    data: data === undefined ? value : data,
  };
}

/** unwrapFrame + normaliseEvent. */
export function eventFromFrame(frame: string | Buffer): InstrumentEvent {
  return normaliseEvent(unwrapFrame(frame));
}

/** Whether `code` is one of `wanted` (case-insensitive); an empty list wants everything. */
export function codeMatches(code: string, wanted: readonly string[]): boolean {
  if (wanted.length === 0) return true;
  const c = code.trim().toLowerCase();
  return wanted.some((w) => w.trim().toLowerCase() === c);
}

/** A property of `obj` by any of `names`, letter case ignored. */
export function pickAny(obj: Record<string, unknown>, names: readonly string[]): unknown {
  const lower = names.map((n) => n.toLowerCase());
  for (const wanted of lower) {
    for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === wanted && v !== undefined && v !== null) return v;
  }
  return undefined;
}

function pick(obj: Record<string, unknown>, names: readonly string[]): unknown {
  return pickAny(obj, names);
}

// ---- instincterrors ---------------------------------------------------------------------------------------------

/** A runtime error that arrived on `instincterrors`, shaped like a pending A error. */
export interface PushedError extends PendingError {
  /** 'firmware' when the frame says so or gives no source; 'service' when it says the error is also in the error list */
  source: 'firmware' | 'service';
}

export type ErrorFrame =
  /**
   * `sourceNamed`: the frame names the error's source (`source` "Firmware" or "Service"); a frame without one reads as
   * a firmware error by default, and may be a listed error after all (its poll tells)
   */
  | { kind: 'raised'; error: PushedError; sourceNamed?: true }
  | { kind: 'resolved'; resolvedId: string }
  /** `leftOut`: the errors of a list beyond MAX_ERRORS_PER_FRAME, not read */
  | { kind: 'unrecognised'; reason: string; leftOut?: number };

const RESOLVED_CODE = /resolved|cleared|handled|closed|acknowledged/;
const SEVERITIES: Record<string, string> = { warning: 'Warning', error: 'Error', fatal: 'Fatal', info: 'Warning' };

/**
 * Reads an `instincterrors` event (as normaliseEvent made it): a new error, shaped like a pending A error so it
 * can be raised and answered like one, or the resolution of one. The frame shape is not documented, so keys are
 * looked up loosely; an error without an id gets a stable one from a hash of its code, title and message, so
 * that the same frame sent twice is the same error.
 */
export function firmwareErrorFromFrame(event: InstrumentEvent): ErrorFrame {
  const body = isRecord(event.data) ? event.data : undefined;
  if (!body) return { kind: 'unrecognised', reason: 'the frame carries no error object' };
  const id = pickAny(body, ['id', 'errorId', 'uuid', 'guid']);
  const idText = typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  const flagged = pickAny(body, ['resolved', 'isResolved', 'handled', 'isHandled', 'cleared']) === true;
  if (RESOLVED_CODE.test(event.code) || flagged) {
    return idText
      ? { kind: 'resolved', resolvedId: idText }
      : { kind: 'unrecognised', reason: 'a resolution without an error id' };
  }
  const title = text(pickAny(body, ['title', 'caption', 'errorTitle', 'name'])) ?? event.description;
  const message = text(pickAny(body, ['message', 'text', 'details', 'errorMessage', 'description'])) ?? '';
  if (!idText && !title && !message) return { kind: 'unrecognised', reason: 'the frame has no id, title or message' };
  const severityRaw = text(pickAny(body, ['severity', 'level']));
  const named = text(pickAny(body, ['source']))
    ?.trim()
    .toLowerCase();
  const source = named === 'service' ? 'service' : 'firmware';
  const error: PushedError = {
    ...body,
    id: idText ?? `fw-${createHash('sha256').update(`${event.code}\n${title}\n${message}`).digest('hex').slice(0, 16)}`,
    title: title || 'Instrument error',
    message,
    severity: severityRaw ? (SEVERITIES[severityRaw.toLowerCase()] ?? severityRaw) : 'Error',
    errorResponses: responseOptions(pickAny(body, ['errorResponses', 'responses', 'buttons'])),
    source,
  };
  const groupId = text(pickAny(body, ['groupId']));
  if (groupId) error.groupId = groupId;
  const timeStamp = text(pickAny(body, ['timeStamp', 'timestamp', 'date', 'time']));
  if (timeStamp) error.timeStamp = timeStamp;
  return named === 'firmware' || named === 'service' ? { kind: 'raised', error, sourceNamed: true } : { kind: 'raised', error };
}

/** Why a frame listing no error is unrecognised: nothing to raise, nothing to warn of either. */
export const EMPTY_LIST_REASON = 'the frame lists no error';

/** Errors read from one frame at most; the rest of a longer list are left out, said as one unrecognised entry. */
export const MAX_ERRORS_PER_FRAME = 500;

/**
 * Every error an `instincterrors` frame carries. The frame shape is not documented: besides one error as `data`,
 * a frame may list errors, as `check-for-pending-errors` lists them (`data` an array, or the whole frame an array):
 * each element is read as firmwareErrorFromFrame reads `data` (an id alone, under a resolving code, resolves it).
 * An empty list resolves nothing: what the instrument meant by it is not known.
 */
export function firmwareErrorsFromFrame(event: InstrumentEvent): ErrorFrame[] {
  if (!Array.isArray(event.data)) return [firmwareErrorFromFrame(event)];
  const items: unknown[] = event.data;
  if (items.length === 0) return [{ kind: 'unrecognised', reason: EMPTY_LIST_REASON }];
  const out = items.slice(0, MAX_ERRORS_PER_FRAME).map((item): ErrorFrame => {
    if ((typeof item === 'string' || typeof item === 'number') && RESOLVED_CODE.test(event.code) && String(item).trim() !== '')
      return { kind: 'resolved', resolvedId: String(item) };
    return firmwareErrorFromFrame({ ...event, data: item });
  });
  if (items.length > MAX_ERRORS_PER_FRAME) {
    out.push({
      kind: 'unrecognised',
      reason: `the frame lists ${items.length} errors: those after the first ${MAX_ERRORS_PER_FRAME} were left out`,
      leftOut: items.length - MAX_ERRORS_PER_FRAME,
    });
  }
  return out;
}

function responseOptions(raw: unknown): ErrorResponseOption[] {
  if (!Array.isArray(raw)) return [];
  const out: ErrorResponseOption[] = [];
  for (const option of raw) {
    if (typeof option === 'string') out.push({ response: option });
    else if (isRecord(option)) {
      const name = pickAny(option, ['response', 'name', 'text']);
      if (typeof name === 'string') out.push({ response: name });
    }
  }
  return out;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

function camel(key: string): string {
  return key.length > 0 ? key[0].toLowerCase() + key.slice(1) : key;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
