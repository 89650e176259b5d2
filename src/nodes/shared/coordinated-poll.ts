/** The thin wiring between a poll node and the coordination (several Node-REDs through Redis): gate, status, mark. */
import type { InstrumentCoordination } from '../../coordination/coordinator';
import type { ErrorGate, GateItem } from '../../coordination/error-gate';
import { type NodeStatus } from './node-red';
import { type LhServerNode } from './server-node';

/** The node's raised / resolved gate when its lh-server is coordinated; undefined for "this Node-RED only". */
export function gateFor<T>(
  server: LhServerNode,
  watch: string,
  rules: { keyOf(source: 'A' | 'B', record: T): string | undefined; wanted?(record: T): boolean },
): ErrorGate<T> | undefined {
  if (!server.coordinator || !server.coordination) return undefined;
  const wanted = rules.wanted?.bind(rules);
  return server.coordinator.errorGate<T>(server.instrumentKey, watch, {
    keyOf: (source, record) => (source === 'A' || source === 'B' ? rules.keyOf(source, record) : undefined),
    ...(wanted ? { wanted } : {}),
  });
}

/**
 * Per source that answered, what it listed (key → the records under it: an instrument may list several errors under
 * one id): the gate resolves what nobody saw resolve, and raises what is listed and in no replica's shared memory (a
 * holder whose lease went while it was recording lost those).
 */
export function listedKeysOf<T>(
  results: readonly ({ source: 'A' | 'B'; records: T[] } | { source: 'A' | 'B'; error: unknown })[],
  rules: { keyOf(source: 'A' | 'B', record: T): string | undefined },
): Map<string, Map<string, T[]>> {
  const out = new Map<string, Map<string, T[]>>();
  for (const r of results) {
    if (!('records' in r)) continue;
    const keys = new Map<string, T[]>();
    for (const record of r.records) {
      const key = rules.keyOf(r.source, record);
      if (key === undefined) continue;
      const under = keys.get(key);
      if (under) under.push(record);
      else keys.set(key, [record]);
    }
    out.set(r.source, keys);
  }
  return out;
}

/**
 * A msg emitted while Redis could not be reached says so (`msg.coordination = "lost"`): it may come twice. A msg sent
 * again after a holder stopped before it settled it, or after Redis lost its data, says so too
 * (`msg.redelivered = true`, `msg.redeliveryReason`): a flow can tell it may have had it before.
 */
export function markLost<M extends object>(msg: M, item: GateItem<unknown>): M {
  if (item.lost) Object.assign(msg, { coordination: 'lost' });
  if (item.redelivered) Object.assign(msg, { redelivered: true, redeliveryReason: item.redelivered });
  return msg;
}

/** The status while coordinated and not simply the holder: standby naming the holder, or coordination lost. */
export function coordinationStatus(coordination: InstrumentCoordination | undefined): NodeStatus | undefined {
  if (!coordination) return undefined;
  const state = coordination.state;
  switch (state.role) {
    case 'holder':
      return undefined;
    case 'lost':
      return { fill: 'red', shape: 'ring', text: 'coordination lost: notifying, no automatic answers' };
    case 'joining':
      return { fill: 'grey', shape: 'ring', text: 'joining coordination' };
    case 'standby':
      return { fill: 'grey', shape: 'dot', text: state.holder ? `standby: ${state.holder} holds it` : 'standby' };
  }
}
