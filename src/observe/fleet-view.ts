/**
 * The fleet as a wall screen shows it: one row per instrument, folded from the state documents lh-state sends
 * (src/observe/state-document.ts). Example 07's function node "fleet (server side)" does this fold in flow context
 * with the same rules (test/unit/fleet-view.test.ts runs that node's code against this module); the page shows the
 * rows it is given. Pure: no timers, no Node-RED.
 *
 * - A msg whose payload is a state document replaces its instrument's row (rows are known by the instrument's name),
 *   the rows sorted by name. Anything else (an event msg of lh-state's second output, junk) changes nothing: the same
 *   array comes back.
 * - A msg with `topic` "prune" drops the rows not heard of for `STALE_MS` (lh-state sends its document again every
 *   minute by default), or for as long as the document's MQTT 5 expiry says when that is longer (three of its state
 *   node's repeats: one repeating every 10 minutes is not dropped between two): an instrument removed from the flows
 *   leaves the screen.
 * - Bounded: at most `MAX_FLEET` rows (the one heard of longest ago goes first), 20 errors a row, texts clipped.
 * - Safe to show: an answer link is kept only when it is an http(s) URL (never `javascript:`); texts are data, the
 *   page escapes them.
 */
import { clippedWithin } from './whole-characters';

export interface FleetError {
  source: string;
  id: string;
  title: string;
  severity: string;
  answerUrl: string | null;
  answerExpires: string | null;
}

export interface FleetRow {
  instrument: string;
  connection: string;
  reason: string;
  run: { state: string | null; protocol: string | null; step: string | null; progress: number | null };
  pending: number;
  errors: FleetError[];
  updatedAt: string;
  /** when this row was last heard of (ms) */
  seenAt: number;
  /** how long it stays without a document (ms): its document's expiry, at least STALE_MS */
  keepMs: number;
}

export const MAX_FLEET = 200;
export const MAX_FLEET_ERRORS = 20;
export const STALE_MS = 5 * 60_000;
/** the longest a row is kept unheard of: three of lh-state's longest repeats (a day) */
export const MAX_KEEP_MS = 3 * 86_400_000;
const MAX_NAME = 100;
const MAX_TEXT = 200;

function clip(value: unknown, max: number): string {
  const s = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  // never cutting a character in two: a lone surrogate half is refused by strict JSON readers (the page's msg)
  return clippedWithin(s, max);
}

function textOrNull(value: unknown): string | null {
  return value === undefined || value === null || value === '' ? null : clip(value, MAX_TEXT);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value);
}

function httpUrl(value: unknown): string | null {
  return typeof value === 'string' && value.length <= 4000 && /^https?:\/\//i.test(value) ? value : null;
}

function errorOf(e: unknown): FleetError | null {
  if (!isObject(e)) return null;
  const answerUrl = httpUrl(e.answerUrl);
  return {
    source: clip(e.source, 1),
    id: clip(e.id, MAX_TEXT),
    title: clip(e.title, MAX_TEXT),
    severity: clip(e.severity, MAX_TEXT),
    answerUrl,
    answerExpires: answerUrl && typeof e.answerExpires === 'string' ? clip(e.answerExpires, 40) : null,
  };
}

/** How long a row stays unheard of: the msg's MQTT 5 expiry (seconds; three lh-state repeats), at least STALE_MS. */
export function keepMsOf(msg: Record<string, unknown>): number {
  const seconds = msg.messageExpiryInterval;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return STALE_MS;
  return Math.min(MAX_KEEP_MS, Math.max(STALE_MS, seconds * 1000));
}

/** The row of a state document, or null when the payload is not one. */
export function rowOf(doc: unknown, now: number, keepMs = STALE_MS): FleetRow | null {
  if (!isObject(doc) || typeof doc.instrument !== 'string' || doc.instrument === '') return null;
  if (!isObject(doc.connection) || !isObject(doc.errors)) return null;
  const run = isObject(doc.run) ? doc.run : {};
  const progress = typeof run.progress === 'number' && run.progress >= 0 && run.progress <= 1 ? run.progress : null;
  const list = Array.isArray(doc.errors.list) ? doc.errors.list : [];
  const errors = list
    .slice(0, MAX_FLEET_ERRORS)
    .map(errorOf)
    .filter((e): e is FleetError => e !== null);
  const pending = doc.errors.pending;
  return {
    instrument: clip(doc.instrument, MAX_NAME),
    connection: clip(doc.connection.state, 20) || 'unknown',
    reason: clip(doc.connection.reason, MAX_TEXT),
    run: { state: textOrNull(run.state), protocol: textOrNull(run.protocol), step: textOrNull(run.step), progress },
    pending: typeof pending === 'number' && Number.isInteger(pending) && pending >= 0 ? pending : errors.length,
    errors,
    updatedAt: clip(doc.updatedAt, 40),
    seenAt: now,
    keepMs,
  };
}

/** The rows after one msg (the same array when nothing changed). */
export function foldFleet(rows: readonly FleetRow[], msg: unknown, now: number): readonly FleetRow[] {
  if (!isObject(msg)) return rows;
  if (msg.topic === 'prune') {
    // a row kept before rows said how long (flow context of an earlier version): STALE_MS
    const fresh = rows
      .filter((r) => now - r.seenAt <= (typeof r.keepMs === 'number' ? r.keepMs : STALE_MS))
      // heard of "in the future": the clock was set back since; counted from now (not kept for as long as the step)
      .map((r) => (r.seenAt > now ? { ...r, seenAt: now } : r));
    return fresh.length === rows.length && fresh.every((r, i) => r === rows[i]) ? rows : fresh;
  }
  const row = rowOf(msg.payload, now, keepMsOf(msg));
  if (!row) return rows;
  let next = rows.filter((r) => r.instrument !== row.instrument);
  next.push(row);
  while (next.length > MAX_FLEET) {
    let oldest = 0;
    for (let i = 1; i < next.length; i++) if (next[i].seenAt < next[oldest].seenAt) oldest = i;
    next = next.filter((_, i) => i !== oldest);
  }
  return next.sort((a, b) => (a.instrument < b.instrument ? -1 : a.instrument > b.instrument ? 1 : 0));
}
