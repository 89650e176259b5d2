/** Fault injection settings: validation and the per-request roll. */
import type { Faults } from './types';

export const DEFAULT_TIMEOUT_HOLD_MS = 30_000;

export type FaultOutcome = 'reset' | 'timeout' | 'status' | 'none';

function rate(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > 1)
    throw new RangeError(`${name} must be a number from 0 to 1`);
  return value;
}

function nonNegative(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number >= 0`);
  return value;
}

/** Checks a Faults object (from code or from PUT /sim/faults); throws RangeError naming the bad field. */
export function normaliseFaults(input: unknown): Faults {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new RangeError('faults must be an object');
  const f = input as Record<string, unknown>;
  const out: Faults = {
    statusRate: rate(f.statusRate, 'statusRate'),
    resetRate: rate(f.resetRate, 'resetRate'),
    timeoutRate: rate(f.timeoutRate, 'timeoutRate'),
    latencyMs: nonNegative(f.latencyMs, 'latencyMs'),
    timeoutHoldMs: nonNegative(f.timeoutHoldMs, 'timeoutHoldMs'),
    loginRejectionDelayMs: nonNegative(f.loginRejectionDelayMs, 'loginRejectionDelayMs'),
    trickleMs: nonNegative(f.trickleMs, 'trickleMs'),
  };
  if (f.statusCode !== undefined) {
    if (typeof f.statusCode !== 'number' || !Number.isInteger(f.statusCode) || f.statusCode < 400 || f.statusCode > 599) {
      throw new RangeError('statusCode must be an integer from 400 to 599');
    }
    out.statusCode = f.statusCode;
  }
  if (f.clockSpeed !== undefined) {
    if (typeof f.clockSpeed !== 'number' || !Number.isFinite(f.clockSpeed) || f.clockSpeed <= 0)
      throw new RangeError('clockSpeed must be a number > 0');
    out.clockSpeed = f.clockSpeed;
  }
  if (f.htmlErrors !== undefined) {
    if (typeof f.htmlErrors !== 'boolean') throw new RangeError('htmlErrors must be a boolean');
    out.htmlErrors = f.htmlErrors;
  }
  if (f.methods !== undefined) {
    if (!Array.isArray(f.methods) || !f.methods.every((m): m is string => typeof m === 'string' && /^[A-Za-z]+$/.test(m))) {
      throw new RangeError('methods must be a list of HTTP method names');
    }
    out.methods = f.methods.map((m) => m.toUpperCase());
  }
  for (const key of Object.keys(out) as (keyof Faults)[]) if (out[key] === undefined) delete out[key];
  return out;
}

/** One independent roll per request: reset, then timeout, then status (only for `methods`, when given). */
export function rollFault(f: Faults, random: () => number = Math.random, method?: string): FaultOutcome {
  if (f.methods && method !== undefined && !f.methods.includes(method.toUpperCase())) return 'none';
  if (f.resetRate && random() < f.resetRate) return 'reset';
  if (f.timeoutRate && random() < f.timeoutRate) return 'timeout';
  if (f.statusRate && random() < f.statusRate) return 'status';
  return 'none';
}
