/**
 * Two lh-server nodes of one name: their state nodes publish on one topic (`lab/<name>/state`) and fill one row of a
 * fleet tab (rows are known by the instrument's name), each document overwriting the other's. Nothing can tell them
 * apart downstream, so a state node says so at deploy. Pure: the registry is the caller's.
 */
import { instrumentIdentity } from '../../coordination/instrument-identity';
import { topicLevel } from '../../observe/state-document';

export interface NamedState {
  /** the lh-server's identity (where its URLs point) */
  instrumentKey: string;
  /** the lh-server's display name */
  instrument: string;
}

/**
 * Another state node's instrument that a document of `me` cannot be told from (same topic level, other instrument:
 * two lh-server nodes naming one instrument with its URLs spelled two ways are one instrument, as coordination and the
 * state node's own listening read them).
 */
export function nameClash(me: NamedState, others: Iterable<NamedState>): NamedState | undefined {
  const mine = instrumentIdentity(me.instrumentKey);
  for (const other of others) {
    if (topicLevel(other.instrument) === topicLevel(me.instrument) && instrumentIdentity(other.instrumentKey) !== mine)
      return other;
  }
  return undefined;
}
