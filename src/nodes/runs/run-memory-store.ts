/**
 * Where lh-run-watch keeps what it reported. Alone ("this Node-RED only"): its in-process memory, nothing else.
 * With an lh-coordination node: only the lease holder watches, and the memory that decides what was reported (the
 * last state, the run being watched, the runs reported finished, when progress was last sent) is shared in Redis,
 * written with the holder's lease before anything is sent, so a new holder neither reports a state change again nor
 * misses one, and a paused old holder sends nothing. The decisions themselves (run-decisions.ts) do not change.
 */
import { RUN_STATE_NAMES, type RunStateName } from '../../contract/instrument-contract';
import type { CoordinatedMemory } from '../../coordination/shared-memory';
import { coordinationStatus } from '../shared/coordinated-poll';
import { type NodeStatus } from '../shared/node-red';
import { type LhServerNode } from '../shared/server-node';
import { FINISHED_MEMORY, newMemory, type RunMemory, type TrackedRun } from './run-decisions';

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

const STATES: ReadonlySet<unknown> = new Set(RUN_STATE_NAMES);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const textOrNull = (v: unknown): boolean => v === null || typeof v === 'string';
const texts = (v: unknown): v is string[] => Array.isArray(v) && v.every((k) => typeof k === 'string');

/** Why a stored run, as this version reads it, is not one; undefined when it is. */
function badRun(run: Record<string, unknown>): string | undefined {
  if (!(run.protocolId === null || (finite(run.protocolId) && Number.isInteger(run.protocolId))))
    return 'run.protocolId is not an integer or null';
  if (!textOrNull(run.protocolName)) return 'run.protocolName is not a text or null';
  if (!textOrNull(run.startTime)) return 'run.startTime is not a text or null';
  if (!finite(run.firstSeenAt)) return 'run.firstSeenAt is not a number';
  if (!Array.isArray(run.states) || !run.states.every((x) => STATES.has(x))) return 'run.states is not a list of run states';
  if (!(run.priorRecordIds === undefined || run.priorRecordIds === null || texts(run.priorRecordIds)))
    return 'run.priorRecordIds is not a list of texts or null';
  if (!(run.priorRecordsUnsure === undefined || typeof run.priorRecordsUnsure === 'boolean'))
    return 'run.priorRecordsUnsure is not true or false';
  return undefined;
}

/** Why a stored memory is not one this version reads; undefined when it is. */
export function badRunMemory(value: unknown): string | undefined {
  if (!isRecord(value)) return 'it is not an object';
  if (!texts(value.finished)) return 'finished is not a list of texts';
  if (!(value.state === undefined || value.state === null || STATES.has(value.state))) return 'state is not a run state';
  if (!(value.progressAt === undefined || value.progressAt === null || finite(value.progressAt)))
    return 'progressAt is not a number';
  if (value.run === undefined || value.run === null) return undefined;
  return isRecord(value.run) ? badRun(value.run) : 'run is not an object';
}

/**
 * A stored memory as this version reads it; undefined when it is not one (it is then started afresh, from what the
 * instrument says, and `warn` is told why: a memory the watch's decisions cannot use would otherwise stop every poll).
 */
export function parseRunMemory(json: string, warn: (text: string) => void = () => undefined): RunMemory | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    warn('the run memory in Redis is not JSON: dropped, the watch goes on from what the instrument says');
    return undefined;
  }
  const bad = badRunMemory(value);
  if (bad !== undefined) {
    warn(`the run memory in Redis is not one (${bad}): dropped, the watch goes on from what the instrument says`);
    return undefined;
  }
  const v = value as Record<string, unknown>;
  const run = v.run === null || v.run === undefined ? undefined : ({ ...(v.run as object) } as TrackedRun);
  if (run) run.states = [...run.states];
  const memory: RunMemory = { finished: (v.finished as string[]).slice(-FINISHED_MEMORY) };
  if (v.state !== undefined && v.state !== null) memory.state = v.state as RunStateName;
  if (run) memory.run = run;
  if (v.progressAt !== undefined && v.progressAt !== null) memory.progressAt = v.progressAt as number;
  return memory;
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
export function runMemoryStore(
  server: LhServerNode,
  nodeId: string,
  local: RunMemory,
  warn: (text: string) => void = () => undefined,
): RunMemoryStore {
  const coordination = server.coordination;
  if (!server.coordinator || !coordination) return alone;
  let bound = SHARED.get(local);
  if (bound?.coordination !== coordination) {
    bound = {
      coordination,
      shared: server.coordinator.memory(server.instrumentKey, `run:${nodeId}`, (json) => parseRunMemory(json, warn)),
    };
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
