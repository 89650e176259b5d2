import { withActor } from '../../audit';
import { type PrepApi, type ServiceRoutine, serviceRoutine, validate as v, validationError } from '../../client';
import { homeOf, slot } from '../../instrument';
import { oneAtATime } from '../shared/one-at-a-time';

export const ROUTINE_OPERATIONS = ['list', 'get', 'update'] as const;
export type RoutineOperation = (typeof ROUTINE_OPERATIONS)[number];

const OP_UPDATE = 'update-service-routine';
/** The fields of a service routine (2.7): an update names only these, as a settings update names only settings. */
const ROUTINE_FIELDS = ['id', 'name', 'isRecommended', 'lastRun'];
/** The longest name an update gives a routine (a step's name is bounded the same): refused before the routine is read. */
export const MAX_ROUTINE_NAME_LENGTH = 1000;

export function routineOperation(value: unknown): RoutineOperation {
  return v.oneOf(value, ROUTINE_OPERATIONS, 'operation', 'lh-service-routine');
}

export async function listRoutines(prep: PrepApi, recommendedOnly: boolean): Promise<ServiceRoutine[]> {
  const all = await prep.listServiceRoutines();
  const list = Array.isArray(all) ? all : [];
  return recommendedOnly ? list.filter((r) => r.isRecommended === true) : list;
}

export interface RoutineUpdate {
  /** the routine id from the dialog or msg.routineId; payload.id when not given */
  routineId: unknown;
  payload: unknown;
  /** sets lastRun to the current time (the payload may then be anything, e.g. an inject timestamp) */
  markRunNow: boolean;
  now?: () => Date;
}

/** The partial routine to write, checked before anything is sent. */
export function routineChanges(u: RoutineUpdate): Record<string, unknown> & { id: number } {
  let changes: Record<string, unknown>;
  if (v.isPlainObject(u.payload)) changes = { ...u.payload };
  else if (u.markRunNow) changes = {};
  else
    throw validationError(
      OP_UPDATE,
      'payload',
      'must be an object with the fields to change, e.g. {"isRecommended": true}',
      u.payload,
    );

  for (const field of Object.keys(changes)) {
    if (!ROUTINE_FIELDS.includes(field)) {
      throw validationError(
        OP_UPDATE,
        `payload.${field}`,
        `is not a service routine field (known: ${ROUTINE_FIELDS.join(', ')})`,
      );
    }
  }
  const given =
    u.routineId === undefined || u.routineId === null || u.routineId === ''
      ? undefined
      : v.databaseId(u.routineId, 'routineId', OP_UPDATE);
  const inBody = changes.id === undefined ? undefined : v.databaseId(changes.id, 'payload.id', OP_UPDATE);
  if (given !== undefined && inBody !== undefined && given !== inBody) {
    throw validationError(
      OP_UPDATE,
      'routineId',
      `(${given}) differs from payload.id (${inBody}); give the routine id in one place`,
    );
  }
  const id = given ?? inBody;
  if (id === undefined)
    throw validationError(OP_UPDATE, 'routineId', 'is required: set it in the dialog, in msg.routineId or in payload.id');
  if (typeof changes.name === 'string' && changes.name.length > MAX_ROUTINE_NAME_LENGTH) {
    throw validationError(OP_UPDATE, 'payload.name', `must be at most ${MAX_ROUTINE_NAME_LENGTH} characters`, changes.name);
  }
  if (u.markRunNow) changes.lastRun = (u.now ?? (() => new Date()))().toISOString();
  if (Object.keys(changes).filter((k) => k !== 'id').length === 0) {
    throw validationError(OP_UPDATE, 'payload', 'names no field to change (name, isRecommended, lastRun)');
  }
  serviceRoutine({ ...changes, id }, OP_UPDATE);
  return { ...changes, id };
}

/**
 * The routine updates under way in this process, per instrument (its home) and routine: two updates of one routine at
 * once both read it before either wrote, and the second wrote the first's change back (a "mark as run now" and a
 * rename: one was lost, reported saved).
 */
const ROUTINE_UPDATES = slot('service-routine-updates', () => new Map<string, Promise<unknown>>());

/**
 * Merges the changes into the routine as it is, writes it, and returns it as the instrument now has it; after every
 * update of the same routine of `instrument` from this process (checked before it waits).
 */
export async function updateRoutine(instrument: string, prep: PrepApi, u: RoutineUpdate): Promise<ServiceRoutine> {
  const changes = routineChanges(u);
  return oneAtATime(homeOf(instrument).slot(ROUTINE_UPDATES), String(changes.id), () => writeRoutine(prep, changes));
}

async function writeRoutine(prep: PrepApi, changes: Record<string, unknown> & { id: number }): Promise<ServiceRoutine> {
  const current = await prep.getServiceRoutine(changes.id);
  // the audit record shows old -> new
  await withActor({ old: current }, () => prep.updateServiceRoutine({ ...current, ...changes }));
  return prep.getServiceRoutine(changes.id);
}
