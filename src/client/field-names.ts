/**
 * The property names the client knows, as it uses them (camelCase). The instrument is an ASP.NET service that
 * matches names case-insensitively and may answer in any case (`ID`, `UUID`, `TOKEN`, `ErrorResponses`): a name
 * is mapped to the known name that matches it ignoring case; an unknown name only gets its first letter lowered.
 */
const KNOWN_FIELDS = [
  // auth result (2.2)
  'userName',
  'userId',
  'token',
  'inactiveLogout',
  'logoutCountdown',
  'expiresIn',
  'passwordExpiresInDays',
  'notifyPasswordExpiresSoon',
  // steps (2.1)
  'stepType',
  'id',
  'name',
  'stepOrder',
  'disabled',
  'makeNameUnique',
  'stepId',
  'newName',
  // errors (2.3 - 2.6)
  'totalItemCount',
  'currentOffset',
  'items',
  'code',
  'innerError',
  'message',
  'type',
  'severity',
  'date',
  'handledDateTime',
  'handled',
  'responses',
  'groupId',
  'title',
  'errorResponses',
  'response',
  'selectedResponse',
  'timeStamp',
  'errorData',
  'description',
  'numberOfErrorsCleared',
  'numberOfErrorsNotCleared',
  // settings and service routines (2.7)
  'hideKeyboard',
  'generateRunReport',
  'allowRedWarningOverride',
  'defaultAmbientTemperature',
  'maximumLoginAttempts',
  'lockTimeout',
  'passwordExpires',
  'passwordExpiresNotification',
  'minimumPasswordLength',
  'enableUserManagement',
  'isRecommended',
  'lastRun',
  // interface B (2.8, 2.9)
  'uuid',
  'data',
  'success',
  'actions',
  'isRecovery',
  'isDefault',
  'defaultActionId',
  'detailedErrorRecoveries',
  'inputs',
  'value',
  'selectedActionId',
  'selectedActionIsRecovery',
  'errorHandlingKey',
  'hasValue',
  'succeeded',
  'result',
  // what the client reads of the answers observed on real instruments (observed-instrument.md): protocols and runs,
  // run records, the workstation, the deck's controls
  'protocolId',
  'isVisible',
  'isValid',
  'validationErrors',
  'steps',
  'protocolRunState',
  'isRunInProgress',
  'isSimulation',
  'protocolName',
  'currentStep',
  'currentStepNumber',
  'stepCount',
  'startTime',
  'estimatedEndTime',
  'simulationSpeed',
  'runResult',
  'isServerReady',
  'requiredServices',
  'isRunning',
  'instrumentName',
  'serialNumber',
  'endpoint',
  'isEnclosurePresent',
  'isDoorClosed',
  'isControlled',
  'controllerMachineName',
  'controllerUserName',
  'version',
  'currentTemperature',
  'targetTemperature',
  'deckLightsSetting',
  'totalCount',
  // problem details (RFC 7807)
  'status',
  'detail',
  'errors',
  'instance',
  'traceId',
] as const;

const byLowerCase = new Map<string, string>(KNOWN_FIELDS.map((name) => [name.toLowerCase(), name]));

/** Keys that would reach an object's prototype when assigned: refused in requests, skipped in answers. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * fieldName() of the names answers use, kept: an answer repeats the same few names, and lower-casing each one of
 * every answer was most of the cost of mapping them (profiled). Bounded, as an instrument may send any names.
 */
const mapped = new Map<string, string>();
const MAX_MAPPED = 4096;
/** Longer names are mapped each time, not kept: 4096 names of any length could hold hundreds of MB. */
const MAX_KEPT_NAME_LENGTH = 64;

/** Makes more names known (the client modules of other instrument operations register theirs). */
export function addKnownFields(names: readonly string[]): void {
  for (const name of names) byLowerCase.set(name.toLowerCase(), name);
  mapped.clear();
}

/** The client's name for a property name as the instrument spelled it. */
export function fieldName(name: string): string {
  return byLowerCase.get(name.toLowerCase()) ?? (name.length > 0 ? name[0].toLowerCase() + name.slice(1) : name);
}

function mappedName(name: string): string {
  let out = mapped.get(name);
  if (out === undefined) {
    out = fieldName(name);
    if (name.length > MAX_KEPT_NAME_LENGTH) return out;
    if (mapped.size >= MAX_MAPPED) mapped.clear();
    mapped.set(name, out);
  }
  return out;
}

/** A copy of an answer with every property name mapped by fieldName(); prototype keys are left out. */
export function normaliseKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => normaliseKeys(item));
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // JSON.parse makes own, enumerable properties only (a "__proto__" key too): Object.keys sees each of them
  for (const k of Object.keys(source)) {
    if (FORBIDDEN_KEYS.has(k)) continue;
    out[mappedName(k)] = normaliseKeys(source[k]);
  }
  return out;
}

/** What is wrong with a request body, where: `rule` completes the sentence that starts with `path`. */
export interface BodyProblem {
  path: string;
  rule: string;
  value?: unknown;
}

/** A body nests no deeper than this: instrument bodies are a few levels deep; deeper ones are refused, not sent unchecked. */
export const MAX_BODY_DEPTH = 64;

/**
 * The first thing in a request body that JSON would not carry as given, or that no write may carry: a prototype key
 * (`payload.a.__proto__`), a number JSON turns into null (NaN, Infinity), a bigint, function or symbol, a cycle, a
 * nesting deeper than MAX_BODY_DEPTH, or more than `maxValues` values (each one at least a byte of JSON: a body over
 * the size limit, found without walking it all). Linear in the body: a value reached twice is walked twice, but never
 * along a cycle, and never beyond `maxValues` in all.
 */
export function bodyProblem(value: unknown, maxValues: number, path = 'payload'): BodyProblem | undefined {
  const ancestors = new Set<object>();
  let count = 0;
  const walk = (v: unknown, here: string, depth: number): BodyProblem | undefined => {
    if (v === undefined) return undefined; // left out of the JSON, as if not given
    if (++count > maxValues)
      return { path, rule: `holds more than ${maxValues} values: its JSON would be over the size limit of a body` };
    if (typeof v === 'number') return Number.isFinite(v) ? undefined : { path: here, rule: 'must be a finite number', value: v };
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol')
      return { path: here, rule: `must be a JSON value (text, number, boolean, null, array or object), not a ${typeof v}` };
    if (typeof v !== 'object' || v === null) return undefined;
    if (ancestors.has(v)) return { path: here, rule: 'refers back to an object that contains it: a body cannot be a cycle' };
    if (depth >= MAX_BODY_DEPTH) return { path: here, rule: `is nested deeper than ${MAX_BODY_DEPTH} levels` };
    ancestors.add(v);
    try {
      const array = Array.isArray(v);
      const entries = array ? v.map((item, i) => [`[${i}]`, item] as const) : Object.entries(v as object);
      for (const [k, item] of entries) {
        const at = array ? `${here}${k}` : `${here}.${k}`;
        if (!array && FORBIDDEN_KEYS.has(k))
          return { path: at, rule: 'is not allowed: keys named __proto__, constructor or prototype are refused' };
        const found = walk(item, at, depth + 1);
        if (found) return found;
      }
      return undefined;
    } finally {
      ancestors.delete(v);
    }
  };
  return walk(value, path, 0);
}

/** How many names the kept table holds, and their length together (keys and mapped names): for tests. */
export function keptFieldNames(): { count: number; chars: number } {
  let chars = 0;
  for (const [k, v] of mapped) chars += k.length + v.length;
  return { count: mapped.size, chars };
}
