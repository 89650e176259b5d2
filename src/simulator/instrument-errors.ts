/**
 * Interface B (4.5): error-handler registration, unhandled instrument errors and recovery submissions.
 *
 * Choices where interfaces.md is silent:
 * - DELETE error-handler with a key that is not registered is 404 (problem details); the registration of
 *   other keys is untouched.
 * - Submissions answer HTTP 200 with success:false (the wrapper of 2.9) when the errorHandlingKey is not
 *   registered, the uuid is unknown, the error was already handled (only one client handles an error: a
 *   second one gets a clear refusal), or the selected action is not offered (recovery: only actions with
 *   isRecovery true; action: any action). Malformed requests (path not a uuid, body uuid differing from the
 *   path, selectedActionId not an int32, input ids the action does not have, a required input missing, a value
 *   not of the input's type or outside its range) are 400 problem details.
 * - An error may have `details` (parts with their own actions, e.g. one per channel): `detailedErrorRecoveries`
 *   answer them one by one (uuid of the detail, its action, its inputs, checked like the main ones); a detail
 *   without a detailed recovery takes the main action.
 */
import { randomUUID } from 'crypto';

import { CLIENT_KEY_PATTERN } from '../contract/instrument-contract';
import { field, FieldErrors, isInt32, isObject, requireObject } from './json-fields';
import { badRequest, HttpProblem, notFound } from './problem';
import type { ErrorAction, ErrorData, InstrumentError, InstrumentErrorSeed, ResultWrapper } from './types';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY = CLIENT_KEY_PATTERN;

export const DEFAULT_ACTIONS: ErrorAction[] = [
  { id: 1, description: 'Retry', isRecovery: true, isDefault: true },
  {
    id: 2,
    description: 'Retry with a new aspiration height',
    isRecovery: true,
    isDefault: false,
    inputs: [
      {
        id: 1,
        description: 'Aspiration height above bottom (mm)',
        defaultValue: '2',
        type: 'number',
        min: 0.5,
        max: 10,
        unit: 'mm',
        required: true,
      },
    ],
  },
  { id: 3, description: 'Skip this step', isRecovery: true, isDefault: false },
  { id: 4, description: 'Abort the run', isRecovery: false, isDefault: false },
];

const MAX_HANDLED = 1000;

export type SubmissionKind = 'recovery' | 'action';

export class InstrumentErrorBook {
  errors: InstrumentError[] = [];
  readonly handlers = new Set<string>();

  clear(): void {
    this.errors = [];
    this.handlers.clear();
  }

  inject(seed: Partial<InstrumentErrorSeed> = {}): InstrumentError {
    const actions = seed.actions && seed.actions.length > 0 ? clone(seed.actions) : clone(DEFAULT_ACTIONS);
    const uuid = seed.uuid ?? randomUUID();
    if (!UUID.test(uuid)) throw new HttpProblem(400, `uuid '${uuid}' is not a UUID.`);
    if (this.errors.some((e) => e.uuid === uuid))
      throw new HttpProblem(409, `An instrument error with uuid '${uuid}' already exists.`);
    const defaultActionId = seed.defaultActionId ?? actions.find((a) => a.isDefault)?.id ?? actions[0].id;
    const error: InstrumentError = {
      uuid,
      title: seed.title ?? 'Aspiration error',
      message: seed.message ?? 'Channel 3 detected a clot while aspirating from Plate1 well B4.',
      severity: seed.severity ?? 'Error',
      date: new Date().toISOString(),
      source: 'Instrument',
      actions,
      defaultActionId,
      timeoutSeconds: seed.timeoutSeconds ?? 300,
      ...(seed.details && seed.details.length > 0 ? { details: clone(seed.details) } : {}),
      handled: false,
      handledAt: null,
      handledBy: null,
      selectedActionId: null,
      acceptedSubmissions: 0,
      rejectedSubmissions: 0,
    };
    this.errors.push(error);
    // handled errors are kept for inspection, bounded
    const handled = this.errors.filter((e) => e.handled);
    if (handled.length > MAX_HANDLED) this.errors = this.errors.filter((e) => e !== handled[0]);
    return clone(error);
  }

  /** POST error-handler */
  register(body: unknown): string {
    const key = readKey(body);
    this.handlers.add(key);
    return 'Error handler registration successful';
  }

  /** DELETE error-handler */
  unregister(body: unknown): string {
    const key = readKey(body);
    if (!this.handlers.delete(key)) throw notFound(`No error handler is registered with key '${key}'.`);
    return 'Error handler unregistration successful';
  }

  /** GET instrument-errors/unhandled */
  unhandled(): ResultWrapper<ErrorData[]> {
    return { data: this.errors.filter((e) => !e.handled).map(toErrorData), message: null, success: true };
  }

  /** POST instrument-errors/{uuid}/recovery and /action */
  submit(kind: SubmissionKind, pathUuid: string, body: unknown): ResultWrapper<string> {
    if (!UUID.test(pathUuid)) throw badRequest('uuid', `'${pathUuid}' is not a UUID.`);
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const bodyUuid = field(obj, 'uuid');
    if (bodyUuid !== undefined && bodyUuid !== null) {
      if (typeof bodyUuid !== 'string' || !UUID.test(bodyUuid)) errors.add('uuid', 'The uuid field must be a UUID.');
      else if (bodyUuid.toLowerCase() !== pathUuid.toLowerCase())
        errors.add('uuid', `The body uuid '${bodyUuid}' differs from the path uuid '${pathUuid}'.`);
    }
    const actionId = field(obj, 'selectedActionId');
    if (!isInt32(actionId))
      errors.add('selectedActionId', 'The selectedActionId field is required and must be a 32-bit integer.');
    const keyRaw = field(obj, 'errorHandlingKey');
    if (keyRaw !== undefined && keyRaw !== null && typeof keyRaw !== 'string')
      errors.add('errorHandlingKey', 'The errorHandlingKey field must be a string or null.');
    const inputs = field(obj, 'inputs');
    if (inputs !== undefined && inputs !== null && !Array.isArray(inputs))
      errors.add('inputs', 'The inputs field must be an array or null.');
    errors.throwIfAny();
    const key = typeof keyRaw === 'string' ? keyRaw : null;
    const error = this.errors.find((e) => e.uuid.toLowerCase() === pathUuid.toLowerCase());
    const refuse = (message: string): ResultWrapper<string> => {
      if (error) error.rejectedSubmissions++;
      return { data: null, message, success: false };
    };
    if (key === null || !this.handlers.has(key)) {
      return refuse(
        `No error handler is registered with key ${key === null ? '(none given)' : `'${key}'`}; register it with POST /api/vector/v3/error-handler first.`,
      );
    }
    if (!error) return refuse(`No instrument error with uuid '${pathUuid}' exists.`);
    if (error.handled)
      return refuse(
        `Instrument error '${error.uuid}' has already been handled${error.handledBy ? ` by '${error.handledBy}'` : ''}.`,
      );
    const action = error.actions.find((a) => a.id === actionId);
    if (!action || (kind === 'recovery' && !action.isRecovery)) {
      const offered = error.actions.filter((a) => kind === 'action' || a.isRecovery).map((a) => `${a.id} (${a.description})`);
      return refuse(
        `Action ${String(actionId)} is not a ${kind === 'recovery' ? 'recovery solution' : 'action'} of this error; offered: ${offered.join(', ')}.`,
      );
    }
    checkInputs(action, inputs, 'inputs');
    const detailed = checkDetailed(error, field(obj, 'detailedErrorRecoveries'));
    error.handled = true;
    error.selectedInputs = Array.isArray(inputs) ? clone(inputs as { id: number; value: string }[]) : null;
    if (detailed.length > 0) error.detailedRecoveries = detailed;
    error.handledAt = new Date().toISOString();
    error.handledBy = key;
    error.selectedActionId = action.id;
    error.acceptedSubmissions++;
    return { data: error.uuid, message: 'Recovery accepted', success: true };
  }

  /** As if the operator chose the default action on the instrument. */
  resolve(uuid: string): void {
    const error = this.errors.find((e) => e.uuid === uuid);
    if (!error) throw new Error(`no instrument error '${uuid}'`);
    if (error.handled) return;
    error.handled = true;
    error.handledAt = new Date().toISOString();
    error.selectedActionId = error.defaultActionId;
  }
}

function readKey(body: unknown): string {
  if (typeof body !== 'string') throw badRequest('$', 'The body must be a JSON string: the client key.');
  if (!KEY.test(body))
    throw badRequest('key', `The client key '${body}' must consist of letters and digits only, without spaces.`);
  return body;
}

function checkInputs(action: ErrorAction, inputs: unknown, name: string): void {
  const declared = action.inputs ?? [];
  const given = new Set<number>();
  if (Array.isArray(inputs)) {
    inputs.forEach((raw: unknown, i: number) => {
      if (!isObject(raw)) throw badRequest(`${name}[${i}]`, 'Each input must be an object {id, value}.');
      const id = field(raw, 'id');
      const input = declared.find((d) => d.id === id);
      if (!isInt32(id) || !input)
        throw badRequest(`${name}[${i}].id`, `Input ${String(id)} is not an input of action ${action.id}.`);
      const value = field(raw, 'value');
      if (typeof value !== 'string') throw badRequest(`${name}[${i}].value`, 'The value of an input must be a string.');
      const type = input.type ?? (input.min !== undefined || input.max !== undefined ? 'number' : 'text');
      if (type !== 'text') {
        const n = value.trim() === '' ? NaN : Number(value);
        const ok =
          Number.isFinite(n) &&
          (type !== 'integer' || Number.isInteger(n)) &&
          !(input.min !== undefined && n < input.min) &&
          !(input.max !== undefined && n > input.max);
        if (!ok) {
          const range = `${input.min ?? '-∞'} to ${input.max ?? '∞'}`;
          throw badRequest(
            `${name}[${i}].value`,
            `Input ${id} (${input.description}) must be a ${type} from ${range}; got '${value}'.`,
          );
        }
      }
      given.add(id);
    });
  }
  for (const input of declared) {
    if (input.required !== false && !given.has(input.id))
      throw badRequest(name, `Input ${input.id} (${input.description}) is required by action ${action.id}.`);
  }
}

type DetailedRecovery = NonNullable<InstrumentError['detailedRecoveries']>[number];

/** The detailed recoveries of a submission, checked against the error's details (400 when one does not fit). */
function checkDetailed(error: InstrumentError, raw: unknown): DetailedRecovery[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw))
    throw badRequest('detailedErrorRecoveries', 'The detailedErrorRecoveries field must be an array or null.');
  const details = error.details ?? [];
  const out: DetailedRecovery[] = [];
  raw.forEach((d: unknown, i: number) => {
    const f = `detailedErrorRecoveries[${i}]`;
    if (!isObject(d)) throw badRequest(f, 'Each detailed recovery must be an object.');
    const uuid = field(d, 'uuid');
    const detail = typeof uuid === 'string' ? details.find((x) => x.uuid.toLowerCase() === uuid.toLowerCase()) : undefined;
    if (!detail) {
      const known = details.map((x) => x.uuid).join(', ') || 'none';
      throw badRequest(`${f}.uuid`, `'${String(uuid)}' is not a detail of error '${error.uuid}' (details: ${known}).`);
    }
    if (out.some((o) => o.uuid === detail.uuid)) throw badRequest(`${f}.uuid`, `Detail '${detail.uuid}' is answered twice.`);
    const actionId = field(d, 'selectedActionId');
    const action = detail.actions.find((a) => a.id === actionId);
    if (!isInt32(actionId) || !action) {
      const offered = detail.actions.map((a) => `${a.id} (${a.description})`).join(', ');
      throw badRequest(
        `${f}.selectedActionId`,
        `Action ${String(actionId)} is not offered by detail '${detail.uuid}'; offered: ${offered}.`,
      );
    }
    const inputs = field(d, 'inputs');
    checkInputs(action, inputs, `${f}.inputs`);
    out.push({
      uuid: detail.uuid,
      selectedActionId: action.id,
      inputs: Array.isArray(inputs) ? clone(inputs as { id: number; value: string }[]) : [],
    });
  });
  return out;
}

function toErrorData(e: InstrumentError): ErrorData {
  return clone({
    uuid: e.uuid,
    title: e.title,
    message: e.message,
    severity: e.severity,
    date: e.date,
    source: e.source,
    actions: e.actions,
    defaultActionId: e.defaultActionId,
    timeoutSeconds: e.timeoutSeconds,
    ...(e.details ? { details: e.details } : {}),
  });
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
