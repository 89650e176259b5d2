/**
 * How deep a msg nests, for Node-RED's copy of it. Node-RED copies a failed msg for each Catch node with a recursive
 * deep copy that overflows the stack near 3000 levels (fewer when the stack is already in use); that exception is
 * uncaught, and Node-RED exits. A msg value nested that deep (a JSON file of nested arrays, a flow's bug) is never
 * one a node takes. Pure.
 */
import { validate as v } from '../../client';

/** Deeper than this a msg value is not given to Catch nodes (the error says so in its place). */
export const MAX_MSG_DEPTH = 256;

/**
 * What the copy goes into, as lodash's cloneDeep does: an array's items, a Map's values, a Set's members, and the own
 * enumerable properties (string and symbol keys) of any object whose tag is Object or Arguments (plain, from another
 * realm, or a class instance). A Buffer, a typed array, a Date, an Error or a function is copied without going in.
 */
function inside(value: unknown): unknown[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) return value;
  if (v.isDataObject(value)) return [...Object.values(value), ...symbolValues(value)]; // a function node's (any realm)
  if (value instanceof Map) return [...value.values()];
  if (value instanceof Set) return [...value];
  if (Buffer.isBuffer(value)) return undefined;
  const tag = Object.prototype.toString.call(value);
  if (tag !== '[object Object]' && tag !== '[object Arguments]') return undefined;
  return [...Object.values(value), ...symbolValues(value)];
}

function symbolValues(value: object): unknown[] {
  const o = value as Record<symbol, unknown>;
  return Object.getOwnPropertySymbols(value)
    .filter((s) => Object.prototype.propertyIsEnumerable.call(value, s))
    .map((s) => o[s]);
}

/**
 * Whether copying `value` as Node-RED does (lodash's cloneDeep: depth first, each object copied once, where it is
 * first met) goes more than `limit` levels deep. Never deeper than `limit` itself (no stack overflow of its own),
 * linear in the value (a shared or cyclic part is walked once). Throws what reading the value throws (a getter, a
 * revoked Proxy), as the copy would.
 */
export function nestsDeeper(value: unknown, limit: number): boolean {
  const seen = new Set<unknown>();
  const deeper = (v: unknown, left: number): boolean => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return false;
    const items = inside(v);
    if (!items) return false;
    if (left <= 0) return true;
    seen.add(v);
    return items.some((item) => deeper(item, left - 1));
  };
  return deeper(value, limit);
}

/**
 * Replaces, in the msg a node failed with, each property nested deeper than MAX_MSG_DEPTH, or that cannot be read
 * through (a getter that throws, a revoked Proxy: the copy would throw too), by a text saying so, so Node-RED can copy
 * the msg for Catch nodes (msg.req and msg.res are not copied by Node-RED and are left as they are). Never throws.
 */
export function cutTooDeep(msg: Record<string, unknown>): void {
  for (const key of Object.keys(msg)) {
    if (key === 'req' || key === 'res') continue;
    let why: string | undefined;
    try {
      if (nestsDeeper(msg[key], MAX_MSG_DEPTH)) why = `nests deeper than ${MAX_MSG_DEPTH} levels`;
    } catch {
      why = 'cannot be read through (a getter or a Proxy threw)';
    }
    if (why === undefined) continue;
    const text = `[msg.${key} ${why}: left out so the error reaches Catch nodes]`;
    try {
      Object.defineProperty(msg, key, { value: text, writable: true, enumerable: true, configurable: true }); // a getter too
    } catch {
      // a property that cannot be redefined is left as it is
    }
  }
}
