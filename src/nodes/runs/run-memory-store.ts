/**
 * Where lh-run-watch keeps what it reported. Alone ("this Node-RED only"): its in-process memory, nothing else.
 * With an lh-coordination node: only the lease holder watches, and the memory that decides what was reported (the
 * last state, the run being watched, the runs reported finished, when progress was last sent) is shared in Redis,
 * written with the holder's lease before anything is sent, so a new holder neither reports a state change again nor
 * misses one, and a paused old holder sends nothing. The decisions themselves (run-decisions.ts) do not change.
 */
import type { CoordinatedMemory } from '../../coordination/shared-memory';
import { coordinationStatus } from '../shared/coordinated-poll';
import { type NodeStatus } from '../shared/node-red';
import { type LhServerNode } from '../shared/server-node';
import { newMemory, type RunMemory } from './run-decisions';

/** What a save said: `ok` send; `fenced` send nothing (another replica watches); `lost` send, marked. */
export type RunSaveVerdict = 'ok' | 'fenced' | 'lost';

export interface RunMemoryStore {
  /** Whether this Node-RED watches now (always, alone). */
  readonly active: boolean;
  /** Before a poll's decisions: brings `memory` up to date (coordinated: the shared memory after a takeover). */
  load(memory: RunMemory): Promise<void>;
  /** After the decisions, before anything is sent. */
  save(memory: RunMemory): Promise<RunSaveVerdict>;
  /** The status while another replica watches (or coordination is lost); undefined while this one watches alone. */
  status(): NodeStatus | undefined;
  /** Calls `listener` when this replica starts or stops watching; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** The run memory's own fields (a WatchMemory has more: its connection state stays in this process). */
function runPart(memory: RunMemory): RunMemory {
  const out: RunMemory = { finished: memory.finished };
  if (memory.state !== undefined) out.state = memory.state;
  if (memory.run !== undefined) out.run = memory.run;
  if (memory.progressAt !== undefined) out.progressAt = memory.progressAt;
  return out;
}

/** A stored memory as this version reads it; undefined when it is not one (it is then started afresh). */
export function parseRunMemory(json: string): RunMemory | undefined {
  try {
    const value = JSON.parse(json) as Partial<RunMemory> | null;
    if (typeof value !== 'object' || value === null || !Array.isArray(value.finished)) return undefined;
    if (!value.finished.every((k) => typeof k === 'string')) return undefined;
    return runPart(value as RunMemory);
  } catch {
    return undefined;
  }
}

const alone: RunMemoryStore = {
  active: true,
  load: () => Promise.resolve(),
  save: () => Promise.resolve('ok'),
  status: () => undefined,
  onChange: () => () => undefined,
};

/**
 * The shared side of each local memory (kept across redeploys of its node, see run-memory.ts), with the instrument's
 * coordination it was made for: a redeployed node whose replica still holds the lease under the same token goes on
 * from its local memory, which is the newest (only this replica wrote under that token), rather than from Redis's,
 * which may be older (Redis restored from an older snapshot, the lease with it, and no round has told it yet).
 */
const SHARED = new WeakMap<RunMemory, { coordination: unknown; shared: CoordinatedMemory<RunMemory> }>();

/**
 * The store of one lh-run-watch node (`nodeId`: the same on every replica), chosen once at start; `local`: the memory
 * the node keeps across redeploys (the one it passes to load and save).
 */
export function runMemoryStore(server: LhServerNode, nodeId: string, local: RunMemory): RunMemoryStore {
  const coordination = server.coordination;
  if (!server.coordinator || !coordination) return alone;
  let bound = SHARED.get(local);
  if (bound?.coordination !== coordination) {
    bound = { coordination, shared: server.coordinator.memory(server.instrumentKey, `run:${nodeId}`, parseRunMemory) };
    SHARED.set(local, bound);
  }
  const shared = bound.shared;
  return {
    get active() {
      return shared.active;
    },
    async load(memory) {
      const loaded = await shared.load();
      if (loaded === 'local') return;
      const next = loaded.memory ?? newMemory();
      memory.state = next.state;
      memory.run = next.run;
      memory.finished = next.finished;
      memory.progressAt = next.progressAt;
    },
    save: (memory) => shared.save(runPart(memory)),
    status: () => coordinationStatus(coordination),
    onChange: (listener) => shared.onChange(listener),
  };
}
