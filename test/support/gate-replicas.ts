/**
 * Replicas reduced to what the error gate sees (coordination tests on a real Redis): a coordinator, the gate of one
 * instrument's poll, the poll node's own memory, and a Redis link a test can cut. `pollGate` is one poll: the memory
 * proposes what is new and what left, the gate decides what goes out, and every msg lands in `sent`.
 */
import { Coordinator } from '../../src/coordination/coordinator';
import { ErrorGate, GateItem } from '../../src/coordination/error-gate';
import { StoreRedis } from '../../src/coordination/stores';
import { reachable } from './redis-link';

export interface Rec {
  id: string;
  title: string;
}

export interface GateNode {
  coordinator: Coordinator;
  /** its Redis link: `down` cuts it (a killed replica) */
  link: { down: boolean };
  gate: ErrorGate<Rec>;
  /** the poll node's own memory: what it reported raised and not yet resolved */
  memory: Map<string, Rec>;
}

export interface Sent {
  kind: 'raised' | 'resolved';
  id: string;
  by: string;
  redelivered?: string;
}

export const INSTRUMENT = 'http://127.0.0.1:9|';
const rules = { keyOf: (_source: string, r: Rec): string => r.id };

/** A replica named `name` of the group `prefix` (lease 60 s) watching INSTRUMENT; `started` collects it for closing. */
export function startGateNode(redis: StoreRedis, prefix: string, name: string, started: Coordinator[]): GateNode {
  const link = reachable(redis);
  const coordinator = new Coordinator({ redis: link.redis, prefix, leaseMs: 60000, replica: name });
  started.push(coordinator);
  coordinator.join(INSTRUMENT);
  return { coordinator, link, gate: coordinator.errorGate<Rec>(INSTRUMENT, 'poll', rules), memory: new Map() };
}

/** One poll of a node listing `listed`. */
export async function pollGate(n: GateNode, listed: Map<string, Rec>, sent: Sent[]): Promise<void> {
  const raised: GateItem<Rec>[] = [...listed.values()]
    .filter((r) => !n.memory.has(r.id))
    .map((r) => ({ source: 'A', record: r }));
  const resolved: GateItem<Rec>[] = [...n.memory.values()]
    .filter((r) => !listed.has(r.id))
    .map((r) => ({ source: 'A', record: r }));
  for (const r of raised) n.memory.set(r.record.id, r.record);
  for (const r of resolved) n.memory.delete(r.record.id);
  await n.gate.filter(raised, resolved, new Map([['A', new Map([...listed].map(([id, r]) => [id, [r]]))]]), (list, item) =>
    sent.push({
      kind: list,
      id: item.record.id,
      by: n.coordinator.replica,
      ...(item.redelivered ? { redelivered: item.redelivered } : {}),
    }),
  );
}

/** Rounds of every node until one holds the instrument (five at most). */
export async function holderOf(nodes: GateNode[]): Promise<{ holder: GateNode; other: GateNode }> {
  for (let i = 0; i < 5; i++) {
    for (const n of nodes) await n.coordinator.round();
    const holder = nodes.find((n) => n.coordinator.held().length > 0);
    if (holder) return { holder, other: nodes.find((n) => n !== holder) as GateNode };
  }
  throw new Error('nobody holds the instrument');
}

/** The *raised* msgs of `id` that say nothing of a redelivery. */
export const unmarked = (sent: Sent[], id: string): Sent[] =>
  sent.filter((s) => s.kind === 'raised' && s.id === id && !s.redelivered);
