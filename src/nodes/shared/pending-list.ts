/**
 * The pending errors of an instrument as one list, folded from what lh-error-poll emits (raised, resolved): the
 * server-side state a dashboard fed straight from lh-error-poll shows (example 07 did this fold in a function node
 * until its lists came from lh-state: see src/observe/state-document.ts and fleet-view.ts). Pure: no timers, no
 * Node-RED.
 *
 * - An error is known by its source and id (A: `errorId`, B: `uuid`); raised again under the same key, it replaces
 *   the entry in place of the old one (an id the instrument reused is the new error) and moves to the end.
 * - Resolved removes it; a resolved error that is not listed changes nothing.
 * - Bounded: at most `max` entries, the oldest dropped first.
 * - Anything else (connection msgs, a msg without payload) leaves the list as it is (the same array).
 */
export interface PendingEntry {
  key: string;
  source: 'A' | 'B';
  id: string;
  title: string;
  message: string;
  severity: string;
  responses: string[];
  /** the error as the instrument gave it (what answering needs) */
  record: Record<string, unknown>;
}

export const MAX_PENDING = 200;

/** The list after one msg of lh-error-poll. */
export function foldPending(list: readonly PendingEntry[], msg: unknown, max = MAX_PENDING): readonly PendingEntry[] {
  if (!msg || typeof msg !== 'object') return list;
  const m = msg as Record<string, unknown>;
  const payload = m.payload;
  if (m.event !== 'raised' && m.event !== 'resolved') return list;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return list;
  if (m.source !== 'A' && m.source !== 'B') return list;
  const record = payload as Record<string, unknown>;
  const id = String((m.source === 'A' ? m.errorId : m.uuid) ?? record.id ?? record.uuid ?? '');
  if (id === '') return list;
  const key = `${m.source}:${id}`;
  const others = list.filter((e) => e.key !== key);
  if (m.event === 'resolved') return others.length === list.length ? list : others;
  const entry: PendingEntry = {
    key,
    source: m.source,
    id,
    title: text(record.title),
    message: text(record.message),
    severity: text(record.severity),
    responses: responsesOf(record),
    record,
  };
  const next = [...others, entry];
  return next.length > max ? next.slice(next.length - Math.max(0, max)) : next;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

/** A: `errorResponses[].response` (or plain strings); B: `actions[].name` when present. */
function responsesOf(record: Record<string, unknown>): string[] {
  const list = Array.isArray(record.errorResponses) ? record.errorResponses : Array.isArray(record.actions) ? record.actions : [];
  return list
    .map((r: unknown) =>
      typeof r === 'string'
        ? r
        : r && typeof r === 'object'
          ? text((r as { response?: unknown; name?: unknown }).response ?? (r as { name?: unknown }).name)
          : '',
    )
    .filter((r) => r !== '');
}
