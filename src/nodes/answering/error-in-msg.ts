import { type NodeMessage } from '../shared/node-red';
import type { ErrorSource } from '../shared/poll-messages';

export type ErrorRecord = Record<string, unknown>;
export type { ErrorSource };

/**
 * Source and key of the error a msg from lh-error-poll carries (a loose read: any object with an `id` or a `uuid`):
 * `msg.source` decides when present, else a string `uuid` means B. The key is the one the answer ledger uses.
 */
export function errorInMsg(msg: NodeMessage): { source: ErrorSource; key: string; record: ErrorRecord } | undefined {
  const record = msg.payload;
  if (!record || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const r = record as ErrorRecord;
  const source: ErrorSource = msg.source === 'B' || (msg.source !== 'A' && typeof r.uuid === 'string') ? 'B' : 'A';
  const id = source === 'A' ? r.id : r.uuid;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  return { source, key: String(id), record: r };
}
