/** Where lh-dialog finds the dialog to close: msg.viewId, else the lh-events msg's payload (key names vary). */
import { pickAny } from '../../client';
import type { NodeMessage } from '../shared/node-red';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** msg.viewId; else msg.payload.data.viewId or .id (any letter case); else msg.payload.viewId; undefined when none. */
export function viewIdOf(msg: NodeMessage): unknown {
  if (present(msg.viewId)) return msg.viewId;
  const payload = msg.payload;
  if (!isRecord(payload)) return undefined;
  const data = pickAny(payload, ['data']);
  if (isRecord(data)) {
    const fromData = pickAny(data, ['viewId', 'id']);
    if (present(fromData)) return fromData;
  }
  const direct = pickAny(payload, ['viewId']);
  return present(direct) ? direct : undefined;
}
