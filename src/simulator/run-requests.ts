/**
 * Reading the run requests' bodies (create, load-complete) and the scripted create faults (PUT /sim/run
 * {failCreate}): each names the field and the rule it breaks.
 */
import { problem } from './problem';
import { FieldErrors, field, isObject, optionalBoolean, requireInt32, requireObject } from './json-fields';
import type { Reply } from './router';

/** POST protocol-run/create {protocolId, simulate?, recompile?}. */
export function readCreate(body: unknown): { protocolId: number; simulate: boolean | undefined } {
  const obj = requireObject(body);
  const errors = new FieldErrors();
  const protocolId = errors.check(() => requireInt32(obj, 'protocolId'));
  const simulate = errors.check(() => optionalBoolean(obj, 'simulate'));
  errors.check(() => optionalBoolean(obj, 'recompile'));
  errors.throwIfAny();
  return { protocolId: protocolId as number, simulate };
}

/** PUT protocol-run/load-complete {protocolId, simulate?, loadCompleteAction?, residualTips?, barcodes?, liquidVolumes?}. */
export function readLoadComplete(body: unknown): { protocolId: number; action: unknown } {
  const obj = requireObject(body);
  const errors = new FieldErrors();
  const protocolId = errors.check(() => requireInt32(obj, 'protocolId'));
  errors.check(() => optionalBoolean(obj, 'simulate'));
  const action = field(obj, 'loadCompleteAction');
  if (
    action !== undefined &&
    action !== null &&
    (typeof action !== 'string' || !['run', 'cancel'].includes(action.toLowerCase()))
  ) {
    errors.add('loadCompleteAction', "loadCompleteAction must be 'Run' or 'Cancel'.");
  }
  for (const list of ['residualTips', 'barcodes', 'liquidVolumes']) {
    const v = field(obj, list);
    if (v !== undefined && v !== null && !Array.isArray(v)) errors.add(list, `${list} must be an array.`);
  }
  errors.throwIfAny();
  return { protocolId: protocolId as number, action };
}

export type CreateFault = { reset: true } | { status: number };

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

/** The answer a create meets under `fault`. */
export function createFaultReply(fault: CreateFault): Reply {
  if ('reset' in fault) return { status: 0, resetConnection: true };
  return {
    status: fault.status,
    body: problem(fault.status, `Fault injected by the simulator on create (HTTP ${fault.status}).`),
  };
}
