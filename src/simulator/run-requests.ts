/** Reading the run requests' bodies (create, load-complete): a 400 names each field and the rule it breaks. */
import { field, FieldErrors, optionalBoolean, requireInt32, requireObject } from './json-fields';

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
