/**
 * Reading request bodies the way ASP.NET model binding does: property names match case-insensitively,
 * and values are type-checked field by field.
 */
import { badRequest, validationProblem } from './problem';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of `name` in `obj`, whatever the case of the key. */
export function field(obj: JsonObject, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

/** The actual key (as sent) that matches `name` case-insensitively. */
export function keyOf(obj: JsonObject, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(obj).find((k) => k.toLowerCase() === lower);
}

export function requireObject(body: unknown, what = 'body'): JsonObject {
  if (!isObject(body)) throw badRequest(what === 'body' ? '$' : what, `The ${what} must be a JSON object.`);
  return body;
}

export function isInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

export function requireString(obj: JsonObject, name: string, opts: { nonEmpty?: boolean } = {}): string {
  const v = field(obj, name);
  if (v === undefined || v === null) throw badRequest(name, `The ${name} field is required.`);
  if (typeof v !== 'string') throw badRequest(name, `The ${name} field must be a string.`);
  if (opts.nonEmpty && v.trim() === '') throw badRequest(name, `The ${name} field must not be empty.`);
  return v;
}

export function optionalString(obj: JsonObject, name: string): string | undefined {
  const v = field(obj, name);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(name, `The ${name} field must be a string.`);
  return v;
}

export function requireBoolean(obj: JsonObject, name: string): boolean {
  const v = field(obj, name);
  if (v === undefined || v === null) throw badRequest(name, `The ${name} field is required.`);
  if (typeof v !== 'boolean') throw badRequest(name, `The ${name} field must be a boolean.`);
  return v;
}

export function optionalBoolean(obj: JsonObject, name: string): boolean | undefined {
  const v = field(obj, name);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badRequest(name, `The ${name} field must be a boolean.`);
  return v;
}

export function requireInt32(obj: JsonObject, name: string): number {
  const v = field(obj, name);
  if (v === undefined || v === null) throw badRequest(name, `The ${name} field is required.`);
  if (!isInt32(v)) throw badRequest(name, `The ${name} field must be a 32-bit integer.`);
  return v;
}

export function optionalInt32(obj: JsonObject, name: string): number | undefined {
  const v = field(obj, name);
  if (v === undefined || v === null) return undefined;
  if (!isInt32(v)) throw badRequest(name, `The ${name} field must be a 32-bit integer.`);
  return v;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

export function isIsoDateTime(value: string): boolean {
  return ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/** Collects every field problem of a body before answering, like ASP.NET's ModelState. */
export class FieldErrors {
  private readonly errors: Record<string, string[]> = {};

  add(name: string, message: string): void {
    (this.errors[name] ??= []).push(message);
  }

  /** Runs a check; a 400 it throws is recorded instead of propagating. */
  check<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      const e = err as { status?: number; body?: { errors?: Record<string, string[]> } };
      if (e.status === 400 && e.body?.errors) {
        for (const [k, msgs] of Object.entries(e.body.errors)) for (const m of msgs) this.add(k, m);
        return undefined;
      }
      throw err;
    }
  }

  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw validationProblem(this.errors);
  }
}

/** A query or path parameter as an int32 >= 0, or a 400 naming it. */
export function parseIdParam(raw: string, name: string): number {
  if (!/^\d{1,10}$/.test(raw))
    throw badRequest(name, `The value '${raw}' is not valid for ${name}: a non-negative 32-bit integer is required.`);
  const n = Number(raw);
  if (n > 2147483647)
    throw badRequest(name, `The value '${raw}' is not valid for ${name}: a non-negative 32-bit integer is required.`);
  return n;
}

export function parseIntQuery(query: Record<string, string>, name: string, fallback: number, min = 0): number {
  const raw = field(query, name);
  if (raw === undefined || raw === '') return fallback;
  const s = String(raw);
  if (!/^-?\d{1,10}$/.test(s) || !isInt32(Number(s)) || Number(s) < min) {
    throw badRequest(name, `The value '${s}' is not valid for ${name}: an integer >= ${min} is required.`);
  }
  return Number(s);
}

export function parseBoolQuery(query: Record<string, string>, name: string, fallback: boolean): boolean {
  const raw = field(query, name);
  if (raw === undefined || raw === '') return fallback;
  const s = String(raw).toLowerCase();
  if (s === 'true') return true;
  if (s === 'false') return false;
  throw badRequest(name, `The value '${String(raw)}' is not valid for ${name}: true or false is required.`);
}
