/**
 * The export format of a protocol ("protocols as code"): `{ name, steps: [ { name, stepType, disabled, ...own
 * fields } ] }`, steps in the protocol's order, without instrument ids and stepOrder. Keys are inserted in one fixed
 * order (name, stepType, disabled, then the step's own fields sorted, nested objects sorted too), so
 * `JSON.stringify(export, null, 2)` of the same protocol is byte-identical and a git diff shows only what changed.
 * Pure: no I/O.
 */
import { createHash } from 'crypto';

import { fieldName, FORBIDDEN_KEYS, MAX_BODY_BYTES, normaliseKeys, validate as v, validationError } from '../../client';
import { STEP_TYPES, STEP_VARIANT_FIELDS, stepFieldProblem, type StepType } from '../../contract/instrument-contract';

/** A step as exported: its identity is its name (unique within a protocol). */
export interface ExportStep {
  name: string;
  stepType: string;
  disabled: boolean;
  [field: string]: unknown;
}

export interface ProtocolExport {
  name: string;
  steps: ExportStep[];
}

/** A step of the desired protocol: as exported, plus an optional `renamedFrom`. */
export interface DesiredStep extends ExportStep {
  renamedFrom?: string;
}

/** A step as the instrument holds it: its export and its instrument id. */
export interface InstrumentStep {
  id: number;
  step: ExportStep;
}

/** The fields every step has (interfaces.md 2.1): never an own field of a variant. */
const COMMON = new Set(['stepType', 'id', 'name', 'stepOrder', 'disabled', 'makeNameUnique'].map((f) => f.toLowerCase()));
/** Fields the export format leaves out: the instrument's, not the protocol's. */
const NOT_IN_FORMAT = new Set(['id', 'steporder', 'makenameunique']);

export const MAX_STEPS = 1000;
export const MAX_NAME_LENGTH = 200;
/** The largest desired protocol accepted, as canonical JSON. */
export const MAX_PROTOCOL_BYTES = 8 * 1024 * 1024;
const MAX_DEPTH = 32;
/** What a step's write adds to the step: its id (an update) or its place (a create). */
const WRITE_OVERHEAD = JSON.stringify({ id: 2 ** 31 - 1, stepOrder: MAX_STEPS + 1 }).length;

/**
 * A key in a spelling the export never shows: the client reads every answer's names as fieldName() gives them
 * (`Setting` → `setting`, `ID` → `id`), so a step written with `Setting` is read back as `setting` and never matches
 * its plan's target. Refused, naming the spelling to write.
 */
function refuseUnreadSpelling(key: string, field: string, operation: string): void {
  const read = fieldName(key);
  if (read !== key) {
    throw validationError(
      operation,
      field,
      `is read back from the instrument as ${read} (the export's spelling): write it as ${read}`,
    );
  }
}

/** A key the client refuses in any request body (it would reach a prototype): refused here, before anything is sent. */
function refuseForbiddenKey(key: string, field: string, operation: string): void {
  if (FORBIDDEN_KEYS.has(key)) {
    throw validationError(
      operation,
      field,
      'is a key no write may carry (keys named __proto__, constructor or prototype are refused by the client)',
    );
  }
}

/** A JSON value with every object's keys sorted (arrays keep their order); undefined properties left out. */
export function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortedJson(item)));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) put(out, key, sortedJson(item));
  }
  return out;
}

/** Sets a property as data, whatever its name (`__proto__` included: never the prototype). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The step's type in the specification's spelling (`TransferSamples` → `TransferSamplesStep`, any letter case). */
export function canonicalStepType(value: unknown, field: string, operation: string): StepType {
  const text = typeof value === 'string' ? value.toLowerCase() : undefined;
  const match = STEP_TYPES.find((t) => t.toLowerCase() === text || t.toLowerCase() === `${text}step`);
  if (!match) v.stepType(value, field, operation); // throws, naming the allowed values
  return match as StepType;
}

/**
 * A step type as the instrument answered it, in the specification's spelling when it is a known one (an instrument
 * answering `TransferSamples` exports as `TransferSamplesStep`, as a desired step is read, so a plan converges); an
 * unknown one as given.
 */
function knownStepType(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value ?? '');
  const lower = text.toLowerCase();
  return STEP_TYPES.find((t) => t.toLowerCase() === lower || t.toLowerCase() === `${lower}step`) ?? text;
}

/** One step in the export's key order: name, stepType, disabled, then its own fields sorted. */
export function canonicalStep(name: string, stepType: string, disabled: boolean, own: Record<string, unknown>): ExportStep {
  const step: ExportStep = { name, stepType, disabled };
  for (const key of Object.keys(own).sort()) {
    if (own[key] !== undefined) put(step, key, sortedJson(own[key]));
  }
  return step;
}

/** The value of a common field whatever the letter case the instrument used (an ASP.NET service). */
function commonField(raw: Record<string, unknown>, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(raw, name)) return raw[name];
  const lower = name.toLowerCase();
  const key = Object.keys(raw).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : raw[key];
}

/** The step's own fields; a field of its type in the specification's spelling whatever the case the instrument used. */
function ownFields(raw: Record<string, unknown>, stepType: string): Record<string, unknown> {
  const types = (STEP_VARIANT_FIELDS as Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>)[stepType];
  const spelling = new Map(Object.keys(types ?? {}).map((k) => [k.toLowerCase(), k]));
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!COMMON.has(key.toLowerCase())) put(own, spelling.get(key.toLowerCase()) ?? key, value);
  }
  return own;
}

/**
 * The protocol as the instrument answered GET protocols/{id} (full step data), as the export and the steps' ids.
 * Steps are put in `stepOrder` (the answer's order where it has none).
 */
export function readInstrumentProtocol(raw: unknown, operation: string): { export: ProtocolExport; steps: InstrumentStep[] } {
  const body = v.plainObject(raw, 'protocol', operation);
  const name = commonField(body, 'name');
  const list = commonField(body, 'steps');
  if (!Array.isArray(list))
    throw validationError(operation, 'protocol.steps', 'must be an array (the instrument answered otherwise)');
  const read = list.map((item, i) => {
    // the names as the client reads any answer (it does so already; here too for an answer given another way)
    const s = normaliseKeys(v.plainObject(item, `protocol.steps[${i}]`, operation)) as Record<string, unknown>;
    const id = v.databaseId(commonField(s, 'id'), `protocol.steps[${i}].id`, operation);
    const stepName = commonField(s, 'name');
    const stepType = commonField(s, 'stepType');
    const order = commonField(s, 'stepOrder');
    const type = knownStepType(stepType);
    return {
      id,
      order: typeof order === 'number' ? order : i + 1,
      index: i,
      step: canonicalStep(
        typeof stepName === 'string' ? stepName : String(stepName ?? ''),
        type,
        commonField(s, 'disabled') === true,
        ownFields(s, type),
      ),
    };
  });
  read.sort((a, b) => a.order - b.order || a.index - b.index);
  return {
    export: { name: typeof name === 'string' ? name : '', steps: read.map((r) => r.step) },
    steps: read.map((r) => ({ id: r.id, step: r.step })),
  };
}

/** The export's one text: what its digest covers and what a file of it holds. */
export function exportText(protocol: ProtocolExport): string {
  return JSON.stringify({ name: protocol.name, steps: protocol.steps });
}

/** The digest that identifies a protocol as it was read: SHA-256 of its export text. */
export function exportDigest(protocol: ProtocolExport): string {
  return `sha256:${createHash('sha256').update(exportText(protocol)).digest('hex')}`;
}

/** The names used by more than one step, in their first order. */
export function duplicateNames(steps: readonly { name: string }[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const s of steps) (seen.has(s.name) ? dup : seen).add(s.name);
  return [...dup];
}

function checkJson(value: unknown, field: string, operation: string, depth = 0): void {
  if (depth > MAX_DEPTH) throw validationError(operation, field, `nests deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw validationError(operation, field, 'must be a finite number', value);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkJson(item, `${field}[${i}]`, operation, depth + 1));
    return;
  }
  if (v.isDataObject(value)) {
    for (const [k, item] of Object.entries(value)) {
      refuseForbiddenKey(k, `${field}.${k}`, operation);
      refuseUnreadSpelling(k, `${field}.${k}`, operation);
      if (item !== undefined) checkJson(item, `${field}.${k}`, operation, depth + 1);
    }
    return;
  }
  throw validationError(operation, field, 'must be a JSON value (text, number, boolean, null, array or object)', value);
}

/**
 * A JSON document a msg carries (the desired protocol, a plan): an object. A text or a Buffer, as a file-in node gives
 * a file, is refused saying to parse it first (a json node), not only "must be an object"; never echoed whole.
 */
export function documentObject(value: unknown, field: string, what: string, operation: string): Record<string, unknown> {
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    throw validationError(
      operation,
      field,
      `must be ${what}, an object: it is ${typeof value === 'string' ? 'a text' : 'a Buffer'} (a file's content?): parse it first with a json node`,
    );
  }
  return v.plainObject(value, field, operation);
}

/**
 * The desired protocol of a plan (`msg.payload = { steps: [...] }`, as export writes it): every step checked, named
 * by its place and name, before anything is sent. Returns the steps in canonical form.
 */
export function readDesired(payload: unknown, operation: string): DesiredStep[] {
  const body = documentObject(payload, 'payload', 'the desired protocol as export writes it', operation);
  if (body.name !== undefined && typeof body.name !== 'string')
    throw validationError(operation, 'payload.name', 'must be a text', body.name);
  if (!Array.isArray(body.steps))
    throw validationError(operation, 'payload.steps', 'must be an array of steps (as export writes them)', body.steps);
  if (body.steps.length > MAX_STEPS) throw validationError(operation, 'payload.steps', `has more than ${MAX_STEPS} steps`);
  const steps = body.steps.map((raw, i) => readDesiredStep(raw, i, operation));
  const names = new Map<string, number>();
  const from = new Map<string, number>();
  steps.forEach((s, i) => {
    const label = `payload.steps[${i}] "${s.name}"`;
    if (names.has(s.name)) {
      throw validationError(
        operation,
        `${label}.name`,
        `repeats the name of payload.steps[${names.get(s.name)}]: step names are unique within a protocol`,
      );
    }
    names.set(s.name, i);
    if (s.renamedFrom !== undefined) {
      if (from.has(s.renamedFrom)) {
        throw validationError(
          operation,
          `${label}.renamedFrom`,
          `names "${s.renamedFrom}", as payload.steps[${from.get(s.renamedFrom)}] does: one step can be renamed once`,
        );
      }
      from.set(s.renamedFrom, i);
    }
  });
  if (Buffer.byteLength(JSON.stringify(steps)) > MAX_PROTOCOL_BYTES) {
    throw validationError(operation, 'payload.steps', `is larger than ${MAX_PROTOCOL_BYTES / 1024 / 1024} MiB as JSON`);
  }
  return steps;
}

function readDesiredStep(raw: unknown, i: number, operation: string): DesiredStep {
  const at = `payload.steps[${i}]`;
  const s = v.plainObject(raw, at, operation);
  const label = typeof s.name === 'string' && s.name !== '' ? `${at} "${s.name.slice(0, 60)}"` : at;
  const name = s.name;
  if (typeof name !== 'string' || name.trim() === '')
    throw validationError(operation, `${label}.name`, 'must be a non-empty text', name);
  if (name.length > MAX_NAME_LENGTH)
    throw validationError(operation, `${label}.name`, `must be at most ${MAX_NAME_LENGTH} characters`);
  const stepType = canonicalStepType(s.stepType, `${label}.stepType`, operation);
  if (s.disabled !== undefined && typeof s.disabled !== 'boolean') {
    throw validationError(operation, `${label}.disabled`, 'must be true or false', s.disabled);
  }
  const renamedFrom = s.renamedFrom;
  if (renamedFrom !== undefined && (typeof renamedFrom !== 'string' || renamedFrom.trim() === '')) {
    throw validationError(operation, `${label}.renamedFrom`, 'must be the old name as a non-empty text', renamedFrom);
  }
  const own: Record<string, unknown> = {};
  const types = STEP_VARIANT_FIELDS[stepType] ?? {};
  /** the instrument matches names in any letter case: one field each, in the specification's spelling */
  const spelling = new Map(Object.keys(types).map((k) => [k.toLowerCase(), k]));
  const ownNames = new Map<string, string>();
  for (const [key, value] of Object.entries(s)) {
    if (key === 'name' || key === 'stepType' || key === 'disabled' || key === 'renamedFrom' || value === undefined) continue;
    refuseForbiddenKey(key, `${label}.${key}`, operation);
    const lower = key.toLowerCase();
    const known = spelling.get(lower);
    if (known !== undefined && known !== key) {
      throw validationError(
        operation,
        `${label}.${key}`,
        `is a field of a ${stepType} in another letter case: write it as ${known}`,
      );
    }
    const twin = ownNames.get(lower);
    if (twin !== undefined) {
      throw validationError(
        operation,
        `${label}.${key}`,
        `differs from ${twin} only in letter case: the instrument takes them as one field (keep one)`,
      );
    }
    ownNames.set(lower, key);
    if (NOT_IN_FORMAT.has(lower)) {
      throw validationError(
        operation,
        `${label}.${key}`,
        'is not part of the export format (steps are known by name and placed by their order)',
      );
    }
    if (COMMON.has(lower) || lower === 'renamedfrom') {
      throw validationError(
        operation,
        `${label}.${key}`,
        `is a common field in another letter case: write it as ${lower === 'steptype' ? 'stepType' : lower === 'renamedfrom' ? 'renamedFrom' : lower}`,
      );
    }
    refuseUnreadSpelling(key, `${label}.${key}`, operation);
    checkJson(value, `${label}.${key}`, operation);
    const type = Object.prototype.hasOwnProperty.call(types, key) ? types[key] : undefined;
    const problem = type === undefined ? undefined : stepFieldProblem(value, type);
    if (problem) throw validationError(operation, `${label}.${key}`, `${problem} for a ${stepType}`, value);
    put(own, key, value);
  }
  const step: DesiredStep = canonicalStep(name, stepType, s.disabled === true, own);
  const bytes = Buffer.byteLength(JSON.stringify(step)) + WRITE_OVERHEAD;
  if (bytes > MAX_BODY_BYTES) {
    throw validationError(
      operation,
      label,
      `is ${bytes} bytes as JSON: a step is written in one request of at most ${MAX_BODY_BYTES} bytes (1 MiB)`,
    );
  }
  if (renamedFrom !== undefined && renamedFrom !== name) step.renamedFrom = renamedFrom as string;
  return step;
}

/** The step without renamedFrom: what the instrument will hold. */
export function asExportStep(step: DesiredStep): ExportStep {
  const { renamedFrom: _from, ...rest } = step;
  return rest;
}

/** The step's own fields (all but name, stepType, disabled), for comparing two versions of a step. */
export function ownFieldsText(step: ExportStep): string {
  const { name: _n, stepType: _t, disabled: _d, ...own } = step;
  return JSON.stringify(sortedJson(own));
}
