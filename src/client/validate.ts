import { CLIENT_KEY_PATTERN, STEP_TYPES } from '../contract/instrument-contract';
import { validationError } from './errors';

export const INT32_MAX = 2147483647;
export const INT32_MIN = -2147483648;

export type { StepType } from '../contract/instrument-contract';
export { SOFTWARE_SETTING_FIELDS, STEP_TYPES } from '../contract/instrument-contract';

export const CLIENT_KEY_MAX_LENGTH = 128;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const ERROR_ID = /^[A-Za-z0-9._~:-]{1,200}$/;

/** A database id: int32 ≥ 0, given as a number or a string of digits. */
export function databaseId(value: unknown, field: string, operation: string): number {
  const rule = `must be a whole number from 0 to ${INT32_MAX}`;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) n = Number(value.trim());
  else throw validationError(operation, field, rule, value);
  if (!Number.isInteger(n) || n < 0 || n > INT32_MAX) throw validationError(operation, field, rule, value);
  return n;
}

export function int32(value: unknown, field: string, operation: string, min = INT32_MIN): number {
  const rule = `must be a whole number from ${min} to ${INT32_MAX}`;
  const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > INT32_MAX) {
    throw validationError(operation, field, rule, value);
  }
  return n;
}

export function optionalInt32(value: unknown, field: string, operation: string, min = 0): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return int32(value, field, operation, min);
}

export function boolean(value: unknown, field: string, operation: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw validationError(operation, field, 'must be true or false', value);
}

export function strictBoolean(value: unknown, field: string, operation: string): boolean {
  if (typeof value !== 'boolean') throw validationError(operation, field, 'must be a boolean (true or false)', value);
  return value;
}

export function optionalBoolean(value: unknown, field: string, operation: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return boolean(value, field, operation);
}

export function nonEmptyString(value: unknown, field: string, operation: string, maxLength = 1000): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw validationError(operation, field, 'must be a non-empty text', value);
  }
  if (value.length > maxLength) throw validationError(operation, field, `must be at most ${maxLength} characters`, value);
  return value;
}

export function clientKey(value: unknown, field: string, operation: string): string {
  if (typeof value !== 'string' || !CLIENT_KEY_PATTERN.test(value) || value.length > CLIENT_KEY_MAX_LENGTH) {
    throw validationError(
      operation,
      field,
      `must be 1 to ${CLIENT_KEY_MAX_LENGTH} letters (A-Z, a-z) and digits, no spaces or other characters`,
      value,
    );
  }
  return value;
}

export function uuid(value: unknown, field: string, operation: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw validationError(operation, field, 'must be a UUID such as 3f2504e0-4f89-11d3-9a0c-0305e82c3301', value);
  }
  return value;
}

/** Error ids are strings on the instrument; they are restricted so they cannot change the request path. */
export function errorId(value: unknown, field: string, operation: string): string {
  const s = typeof value === 'number' && Number.isInteger(value) ? String(value) : value;
  if (typeof s !== 'string' || !ERROR_ID.test(s) || /^\.+$/.test(s)) {
    throw validationError(operation, field, 'must be 1 to 200 letters, digits or . _ ~ : -, not only dots', value);
  }
  return s;
}

/** One of a fixed list of texts (an operation, a kind, a mode). */
export function oneOf<T extends string>(value: unknown, choices: readonly T[], field: string, operation: string): T {
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
  throw validationError(operation, field, `must be one of ${choices.join(', ')}`, value);
}

/** A step type as the spec names it (`TransferSamplesStep`) or without the suffix (`TransferSamples`); sent as given. */
export function stepType(value: unknown, field: string, operation: string): string {
  const known = STEP_TYPES as readonly string[];
  if (typeof value === 'string' && (known.includes(value) || known.includes(`${value}Step`))) return value;
  throw validationError(operation, field, `must be one of ${STEP_TYPES.join(', ')} (the Step suffix may be left out)`, value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object as JSON.parse or an object literal makes it (not an array, class instance, Date, Buffer…), from any realm:
 * a function node's code runs in a sandbox with an Object of its own, so its `{}` has another Object.prototype.
 */
export function isDataObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value) || Object.prototype.toString.call(value) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

export function plainObject(value: unknown, field: string, operation: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw validationError(operation, field, 'must be an object', value);
  return value;
}

export function dateTime(value: unknown, field: string, operation: string): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw validationError(operation, field, 'must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z', value);
  }
  return value;
}
