/**
 * What each lh-run-watch node has reported, per instrument, kept at module level so that it outlives a redeploy
 * of the node or of the whole flow (keyed like lh-error-poll's watches: the lh-server's instrumentKey and the
 * node id, both stable across redeploys). A restart of Node-RED starts from empty.
 */
import { newMemory, RunMemory } from '../runs/run-decisions';

export interface WatchMemory extends RunMemory {
  connection: 'unknown' | 'online' | 'offline';
  /** consecutive polls that found the instrument unreachable */
  unreachablePolls: number;
}

const memories = new Map<string, WatchMemory>();

export function memoryKey(instrumentKey: string, nodeId: string): string {
  return `${instrumentKey}|${nodeId}`;
}

export function memoryFor(key: string): WatchMemory {
  let memory = memories.get(key);
  if (!memory) {
    memory = { ...newMemory(), connection: 'unknown', unreachablePolls: 0 };
    memories.set(key, memory);
  }
  return memory;
}

/** A removed node's memory is dropped (its id will not come back). */
export function forgetMemory(key: string): void {
  memories.delete(key);
}

/** What a restart of Node-RED does (used by tests). */
export function forgetAllMemories(): void {
  memories.clear();
}
