/**
 * How deep a msg nests, for Node-RED's copy of it. Node-RED copies a failed msg for each Catch node with a recursive
 * deep copy that overflows the stack near 3000 levels (fewer when the stack is already in use); that exception is
 * uncaught, and Node-RED exits. A msg value nested that deep (a JSON file of nested arrays, a flow's bug) is never
 * one a node takes. Pure.
 */
import { validate as v } from '../../client';

/** Deeper than this a msg value is not given to Catch nodes (the error says so in its place). */
export const MAX_MSG_DEPTH = 256;

function walked(value: unknown): value is object {
  return Array.isArray(value) || v.isDataObject(value); // a function node's objects too (another realm)
}

/**
 * Whether copying `value` as Node-RED does (lodash's cloneDeep: depth first, each object copied once, where it is
 * first met) goes more than `limit` levels deep into arrays and plain objects. Never deeper than `limit` itself (no
 * stack overflow of its own), linear in the value (a shared or cyclic part is walked once).
 */
export function nestsDeeper(value: unknown, limit: number): boolean {
  const seen = new Set<object>();
  const deeper = (v: unknown, left: number): boolean => {
    if (!walked(v) || seen.has(v)) return false;
    if (left <= 0) return true;
    seen.add(v);
    const items: unknown[] = Array.isArray(v) ? v : Object.values(v);
    return items.some((item) => deeper(item, left - 1));
  };
  return deeper(value, limit);
}

/**
 * Replaces, in the msg a node failed with, each property nested deeper than MAX_MSG_DEPTH by a text saying so, so
 * Node-RED can copy the msg for Catch nodes (msg.req and msg.res are not copied by Node-RED and are left as they are).
 */
export function cutTooDeep(msg: Record<string, unknown>): void {
  for (const key of Object.keys(msg)) {
    if (key === 'req' || key === 'res') continue;
    if (nestsDeeper(msg[key], MAX_MSG_DEPTH)) {
      msg[key] = `[msg.${key} nests deeper than ${MAX_MSG_DEPTH} levels: left out so the error reaches Catch nodes]`;
    }
  }
}
