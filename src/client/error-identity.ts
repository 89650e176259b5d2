/**
 * What makes an instrument error the one a person or a rule saw: its id together with what the instrument says of it
 * (title, time stamp, group, severity). Instruments reuse ids (after a restart, or once the old error left the list),
 * so an id alone may name another error by the time an answer is sent. Pure: no I/O.
 *
 * An identity keeps a short hash of each field the record has. Two identities are the same error when their ids
 * are equal and every field both of them have is equal: a record that lacks a field (a pushed frame without a time
 * stamp, an older saved memory) is not taken for another error because of the missing field alone.
 */
import { createHash } from 'crypto';

/** t: title, d: time stamp, g: group, s: severity */
export type IdentityField = 't' | 'd' | 'g' | 's';

export interface ErrorIdentity {
  /** the A error's `id` or the B error's `uuid` */
  id: string;
  fields: Partial<Record<IdentityField, string>>;
}

const FIELD_ORDER: IdentityField[] = ['t', 'd', 'g', 's'];
const HASH_CHARS = 10;

function text(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const t = value.trim();
  return t === '' ? undefined : t;
}

/** A time stamp in any of the instrument's forms, as one text (ISO when it parses; `0001-` means not set). */
function timeText(value: unknown): string | undefined {
  const t = text(value);
  if (t === undefined || t.startsWith('0001-')) return undefined;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : t;
}

/** `names[i]` of the record, else the first of them in any letter case (the keys lower-cased once per record). */
function picker(record: Record<string, unknown>): (names: string[]) => unknown {
  let lower: Map<string, string> | undefined;
  return (names) => {
    for (const name of names) if (record[name] !== undefined && record[name] !== null) return record[name];
    lower ??= new Map(Object.keys(record).map((k) => [k.toLowerCase(), k]));
    for (const name of names) {
      const key = lower.get(name.toLowerCase());
      if (key !== undefined && record[key] !== undefined && record[key] !== null) return record[key];
    }
    return undefined;
  };
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, HASH_CHARS);
}

/**
 * The field hashes computed lately, by field and the text the record gave (issue 31: every poll lists the same
 * errors again, and the poll, the lab events and the answer checks each asked for their identity: four SHA-256 per
 * record and call, 4 % of Node-RED's thread in a burst of 1,000 errors). Bounded: IDENTITY_MEMO_MAX entries, emptied
 * when full; texts longer than MEMO_TEXT_MAX are hashed every time.
 */
export const IDENTITY_MEMO_MAX = 4096;
const MEMO_TEXT_MAX = 256;
const memo = new Map<string, string | null>();

/** How many field hashes are remembered (for tests). */
export function identityMemoSize(): number {
  return memo.size;
}

/** The hash of one field from the record's text for it (normalised first: a time stamp as ISO, a severity lower-case). */
function fieldHash(field: IdentityField, raw: string): string | undefined {
  const key = raw.length <= MEMO_TEXT_MAX ? `${field}${raw}` : undefined;
  const known = key === undefined ? undefined : memo.get(key);
  if (known !== undefined) return known ?? undefined;
  const normal = field === 'd' ? timeText(raw) : field === 's' ? raw.toLowerCase() : raw;
  const value = normal === undefined ? undefined : hash(normal);
  if (key !== undefined) {
    if (memo.size >= IDENTITY_MEMO_MAX) memo.clear();
    memo.set(key, value ?? null);
  }
  return value;
}

/** The identity of an A pending error (`id`) or a B unhandled error (`uuid`); undefined without an id. */
export function identityOf(record: unknown): ErrorIdentity | undefined {
  if (!record || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const pick = picker(record as Record<string, unknown>);
  const id = text(pick(['uuid'])) ?? text(pick(['id']));
  if (id === undefined) return undefined;
  const raw: Record<IdentityField, string | undefined> = {
    t: text(pick(['title'])),
    d: text(pick(['timeStamp', 'date', 'time'])),
    g: text(pick(['groupId'])),
    s: text(pick(['severity'])),
  };
  const fields: ErrorIdentity['fields'] = {};
  for (const f of FIELD_ORDER) {
    const value = raw[f] === undefined ? undefined : fieldHash(f, raw[f]);
    if (value !== undefined) fields[f] = value;
  }
  return { id, fields };
}

/** Whether two identities name the same error (same id, and no field that both have differs). */
export function sameError(a: ErrorIdentity, b: ErrorIdentity): boolean {
  if (a.id !== b.id) return false;
  for (const f of FIELD_ORDER) {
    const x = a.fields[f];
    const y = b.fields[f];
    if (x !== undefined && y !== undefined && x !== y) return false;
  }
  return true;
}

/**
 * Whether a listed record (already found under the error's id) may be the error seen (`expected`): no field that both
 * have differs. Without an expected identity it may be.
 */
export function mayBeTheError(record: unknown, expected: ErrorIdentity | undefined): boolean {
  const listed = expected ? identityOf(record) : undefined;
  return !expected || !listed || sameError(expected, { ...listed, id: expected.id });
}

/** Whether the identity says anything beyond the id (only then can a changed error be told apart). */
export function hasFields(identity: ErrorIdentity): boolean {
  return FIELD_ORDER.some((f) => identity.fields[f] !== undefined);
}

/** A compact text form (for signed links, saved memory, msgs): `t.xxxx~d.xxxx`, without the id. */
export function fingerprint(identity: ErrorIdentity): string {
  return FIELD_ORDER.filter((f) => identity.fields[f] !== undefined)
    .map((f) => `${f}.${identity.fields[f]}`)
    .join('~');
}

const FINGERPRINT_RE = /^(?:[tdgs]\.[A-Za-z0-9_-]{1,16})(?:~[tdgs]\.[A-Za-z0-9_-]{1,16}){0,3}$/;

/** The identity of `id` with the fields of a fingerprint; undefined for anything that is not one. */
export function fromFingerprint(id: string, value: unknown): ErrorIdentity | undefined {
  if (value === '') return { id, fields: {} };
  if (typeof value !== 'string' || value.length > 80 || !FINGERPRINT_RE.test(value)) return undefined;
  const fields: ErrorIdentity['fields'] = {};
  for (const part of value.split('~')) fields[part[0] as IdentityField] = part.slice(2);
  return { id, fields };
}

/**
 * What a list shows under `expected`'s id: the same error ('same'), another error only ('changed': the instrument
 * reused the id), several different errors ('ambiguous': an answer by id cannot say which one it is for), or nothing
 * ('absent'). Records under the id that are the same error (listed twice) count once; two records are different
 * errors when their identities differ (per sameError: a field one of them lacks is no difference).
 */
export type Listed<T> =
  { kind: 'same'; record: T } | { kind: 'changed'; record: T } | { kind: 'ambiguous'; records: T[] } | { kind: 'absent' };

export function listedUnder<T>(list: readonly T[], expected: ErrorIdentity): Listed<T> {
  const under: { record: T; identity: ErrorIdentity }[] = [];
  for (const record of list) {
    const identity = identityOf(record);
    if (identity?.id === expected.id) under.push({ record, identity });
  }
  if (under.length === 0) return { kind: 'absent' };
  const distinct = under.some((a, i) => under.some((b, j) => j > i && !sameError(a.identity, b.identity)));
  if (distinct) return { kind: 'ambiguous', records: under.map((u) => u.record) };
  const same = under.find((u) => sameError(expected, u.identity));
  return same ? { kind: 'same', record: same.record } : { kind: 'changed', record: under[0].record };
}

/**
 * The record listed under `expected`'s id when it is another error than `expected` (the instrument reused the id),
 * else undefined (the same error, not listed, or nothing to compare).
 */
export function changedError<T>(list: readonly T[], expected: ErrorIdentity | undefined): T | undefined {
  if (!expected || !hasFields(expected)) return undefined;
  const listed = listedUnder(list, expected);
  return listed.kind === 'changed' ? listed.record : undefined;
}

function titleOf(current: unknown): string {
  const r = current && typeof current === 'object' ? (current as Record<string, unknown>) : {};
  const title = typeof r.title === 'string' && r.title.trim() !== '' ? r.title.trim().slice(0, 120) : 'no title';
  const severity = typeof r.severity === 'string' && r.severity !== '' ? `, ${r.severity.slice(0, 20)}` : '';
  return `"${title}"${severity}`;
}

/** The refusal when the error behind the id changed: nothing was sent. */
export function changedMessage(id: string, current: unknown): string {
  return (
    `error ${id} is no longer the error that was seen: the instrument now lists ${titleOf(current)} under that id. ` +
    'Nothing was sent; answer the new error from its own notification'
  );
}

/** Errors named in an ambiguity refusal at most (the rest are counted). */
const MAX_NAMED = 5;

/** The refusal when the list shows several different errors under the id: nothing was sent. */
export function ambiguousMessage(id: string, records: readonly unknown[]): string {
  const named = records.slice(0, MAX_NAMED).map(titleOf).join('; ');
  const more = records.length > MAX_NAMED ? ` and ${records.length - MAX_NAMED} more` : '';
  return (
    `error ${id} is ambiguous: the instrument lists ${records.length} different errors under this id (${named}${more}), ` +
    'so it cannot tell which one an answer is for. Nothing was sent; answer on the instrument'
  );
}
