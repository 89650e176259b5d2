/**
 * Two lh-server nodes of one name: their state nodes publish on one topic (`lab/<name>/state`) and fill one row of a
 * fleet tab (rows are known by the instrument's name), each document overwriting the other's. Nothing can tell them
 * apart downstream, so a state node says so at deploy. Pure: the registry is the caller's.
 */
import { topicLevel } from '../../observe/state-document';

export interface NamedState {
  /** the lh-server's identity (where its URLs point) */
  instrumentKey: string;
  /** the lh-server's display name */
  instrument: string;
}

/** Another state node's instrument that a document of `me` cannot be told from (same topic level, other instrument). */
export function nameClash(me: NamedState, others: Iterable<NamedState>): NamedState | undefined {
  for (const other of others) {
    if (other.instrumentKey !== me.instrumentKey && topicLevel(other.instrument) === topicLevel(me.instrument)) return other;
  }
  return undefined;
}
