/** An InstrumentApi whose B requests all get one answer, for tests of how the client reads B's result wrappers. */
import { normaliseKeys } from '../../src/client/field-names';
import { InstrumentApi } from '../../src/client/instrument';
import type { Sender } from '../../src/client/prep';

/** InstrumentApi whose every B request is answered `wire` (its names mapped as the transport maps them). */
export function answering(wire: unknown): InstrumentApi {
  const send: Sender = <T>() =>
    Promise.resolve({ status: 200, data: normaliseKeys(JSON.parse(JSON.stringify(wire) ?? 'null')) as T, attempts: 1 });
  return new InstrumentApi(send);
}

/** A recovery submission the client accepts, to see how the answer to it is read. */
export const RECOVERY = {
  date: '2026-11-30T10:00:00Z',
  uuid: '00000000-0000-4000-8000-000000000000',
  selectedActionId: 1,
  selectedActionIsRecovery: true,
  errorHandlingKey: 'nodered',
  detailedErrorRecoveries: null,
  inputs: null,
};
