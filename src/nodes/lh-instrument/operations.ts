/** The lh-instrument node's decisions, without Node-RED: which operation, whether initialise may be sent. */
import { type RunStatus, validate as v } from '../../client';
import { INSTRUMENT_OPERATIONS } from './operation-names';

export { INSTRUMENT_OPERATIONS };
export type InstrumentOperation = (typeof INSTRUMENT_OPERATIONS)[number];

export function instrumentOperation(value: unknown): InstrumentOperation {
  return v.oneOf(value, INSTRUMENT_OPERATIONS, 'operation', 'lh-instrument');
}

/**
 * Why initialise must not be sent now, or undefined: homing moves every axis, so it is refused while a run is in
 * progress (any state but Idle, or the instrument saying a run is in progress) or being started by this Node-RED
 * (`starting`: what the start in flight does; its run is not yet in progress at the instrument).
 */
export function initializeRefusal(
  status: Pick<RunStatus, 'protocolRunState' | 'isRunInProgress'>,
  starting?: string,
): string | undefined {
  if (starting !== undefined) {
    return `initialize refused: a run start on this instrument is under way (${starting}); initialise once it has ended`;
  }
  if (status.isRunInProgress || status.protocolRunState !== 'Idle') {
    return `initialize refused: a run is in progress (run state ${status.protocolRunState}); initialise once it has ended`;
  }
  return undefined;
}
