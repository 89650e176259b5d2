/**
 * What each lh-run-watch node has reported, kept in its instrument's home so that it outlives a redeploy of the node
 * or of the whole flow (keyed like lh-error-poll's watches: the lh-server's instrumentKey and the node id, both
 * stable across redeploys). A restart of Node-RED starts from empty.
 */
import { findHome, homeOf, slot } from '../../instrument';
import { newMemory, type RunMemory } from '../runs/run-decisions';
import type { LabPublisher } from '../shared/lab-publish';
import type { NodeMessage } from '../shared/node-red';

/**
 * What a poll recorded as reported (coordinated: written to Redis) and could not send because its node closed
 * meanwhile (a redeploy while the write was on its way): the node's next instance sends it, once.
 */
export interface UnsentReport {
  /** the node.send arrays, in order */
  sends: (NodeMessage | null)[][];
  /** what the lab (lh-state, metrics) hears with them */
  run?: Parameters<LabPublisher['run']>[0];
  finished?: string;
  /** the finished run was replaced by the run now shown (no Idle between): its end is told before that run's state */
  finishedFirst?: boolean;
}

export interface WatchMemory extends RunMemory {
  connection: 'unknown' | 'online' | 'offline';
  /** consecutive polls that found the instrument unreachable */
  unreachablePolls: number;
  /** recorded as reported by closed instances of the node and not sent: the next instance sends them, in order */
  unsent?: UnsentReport[];
}

const MEMORIES = slot('run-memory', () => new Map<string, WatchMemory>());

export function memoryKey(instrumentKey: string, nodeId: string): string {
  return `${instrumentKey}|${nodeId}`;
}

/** The memory of the lh-run-watch node `nodeId` of the instrument `instrumentKey`, made on first use. */
export function memoryFor(instrumentKey: string, nodeId: string): WatchMemory {
  const memories = homeOf(instrumentKey).slot(MEMORIES);
  const key = memoryKey(instrumentKey, nodeId);
  let memory = memories.get(key);
  if (!memory) {
    memory = { ...newMemory(), connection: 'unknown', unreachablePolls: 0 };
    memories.set(key, memory);
  }
  return memory;
}

/** A removed node's memory is dropped (its id will not come back). */
export function forgetMemory(instrumentKey: string, nodeId: string): void {
  findHome(instrumentKey)?.slot(MEMORIES).delete(memoryKey(instrumentKey, nodeId));
}
