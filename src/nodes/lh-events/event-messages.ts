/** What lh-events sends: pure functions from instrument events and connection changes to msgs. */
import type { EventStateChange, InstrumentEvent } from '../../client';
import type { InstrumentInfo } from '../shared/error-records';
import type { NodeMessage } from '../shared/node-red';
import { oneLine } from '../shared/one-line';

/** The codes setting: an array or a comma/space/newline separated text; lower case, no duplicates; empty = all. */
export function parseCodes(raw: unknown): string[] {
  const parts = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(/[\s,;]+/) : [];
  const out: string[] = [];
  for (const p of parts) {
    const code = p.trim().toLowerCase();
    if (code !== '' && !out.includes(code)) out.push(code);
  }
  return out;
}

export function eventMessage(event: InstrumentEvent, instrument: InstrumentInfo): NodeMessage {
  // msg.instrument a copy: the node's own object edited by a flow (change node on the first wire) would be every next msg's
  // msg.payload.code as the instrument sent it; the topic one line (a code with a line break or an escape sequence)
  return { topic: oneLine(event.code), payload: event, instrument: { ...instrument } };
}

export function connectionMessage(change: EventStateChange, instrument: InstrumentInfo, now = new Date()): NodeMessage {
  return {
    topic: 'connection',
    event: change.state,
    payload: {
      state: change.state,
      ...(change.reason ? { reason: change.reason } : {}),
      socket: 'instinctevents',
      since: now.toISOString(),
    },
    instrument: { ...instrument },
  };
}
