/**
 * How the next runs are scripted to go wrong (PUT /sim/run {failCreate, endNext}): creates that fail without
 * creating anything, and runs that end as in the failures a review reproduced (see RunEnding).
 */
import { isObject } from './json-fields';
import { problem } from './problem';
import type { Reply } from './router';
import type { RunEnding } from './run-transitions';

export type CreateFault = { reset: true } | { status: number };

export class RunScript {
  private faults: CreateFault[] = [];
  private endings: RunEnding[] = [];

  /** The next run (one per call, in order) ends as `spec` says. */
  endNext(spec: unknown): void {
    this.endings.push(runEnding(spec));
  }

  /** How the run being created now ends (undefined: as it goes). */
  takeEnding(): RunEnding | undefined {
    return this.endings.shift();
  }

  /** The next creates meet these faults, one each. */
  failNextCreates(spec: unknown): void {
    this.faults.push(...createFaults(spec));
  }

  /** The answer to this create, when a fault is planned for it. */
  takeCreateFault(): Reply | undefined {
    const fault = this.faults.shift();
    return fault ? createFaultReply(fault) : undefined;
  }

  clear(): void {
    this.faults = [];
    this.endings = [];
  }
}

/** Reads an `endNext` spec; throws a RangeError naming the field and the rule. */
export function runEnding(spec: unknown): RunEnding {
  const o = isObject(spec) ? spec : {};
  const at = o.at;
  if (at !== 'scheduling' && at !== 'deck-check' && at !== 'end') {
    throw new RangeError("endNext.at must be 'scheduling', 'deck-check' or 'end'");
  }
  if (o.result !== undefined && typeof o.result !== 'string') throw new RangeError('endNext.result must be text');
  return o.result === undefined ? { at } : { at, result: o.result };
}

/** A failCreate spec {status?, reset?, count?} as the list of faults the next creates meet (status 503 by default). */
export function createFaults(spec: unknown): CreateFault[] {
  const o = isObject(spec) ? spec : {};
  const count = typeof o.count === 'number' && Number.isInteger(o.count) && o.count > 0 ? o.count : 1;
  const status =
    typeof o.status === 'number' && Number.isInteger(o.status) && o.status >= 400 && o.status <= 599 ? o.status : 503;
  const out: CreateFault[] = [];
  for (let i = 0; i < count; i++) out.push(o.reset === true ? { reset: true } : { status });
  return out;
}

/** The answer a create meets under `fault`: a problem with its status, or a connection reset. */
export function createFaultReply(fault: CreateFault): Reply {
  if ('reset' in fault) return { status: 0, resetConnection: true };
  return {
    status: fault.status,
    body: problem(fault.status, `Fault injected by the simulator on create (HTTP ${fault.status}).`),
  };
}
