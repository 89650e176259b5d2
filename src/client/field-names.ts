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

/** The path of the first prototype key in a request body (`payload.a.__proto__`), or undefined. */
export function forbiddenKeyIn(value: unknown, path = 'payload', depth = 0): string | undefined {
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [`[${i}]`, v] as const)
    : Object.entries(value as object).map(([k, v]) => [k, v] as const);
  for (const [k, v] of entries) {
    const here = Array.isArray(value) ? `${path}${k}` : `${path}.${k}`;
    if (!Array.isArray(value) && FORBIDDEN_KEYS.has(k)) return here;
    const deeper = forbiddenKeyIn(v, here, depth + 1);
    if (deeper) return deeper;
  }
  return undefined;
}

/** How many names the kept table holds, and their length together (keys and mapped names): for tests. */
export function keptFieldNames(): { count: number; chars: number } {
  let chars = 0;
  for (const [k, v] of mapped) chars += k.length + v.length;
  return { count: mapped.size, chars };
}
