import {
  ambiguousMessage,
  changedMessage,
  type ErrorIdentity,
  fingerprint,
  fromFingerprint,
  hasFields,
  listedUnder,
  sameError,
} from './error-identity';
import { LhError } from './errors';

/** An answer this Node-RED gave, or is giving, to one instrument error. */
export interface AnswerRecord {
  /** A errors by their `id`, B errors by their `uuid` */
  errorKey: string;
  /** A: the selected response; B: the selected action id (as text) */
  response: string;
  /** who answered, when the caller said so (audit) */
  by?: string;
  /** when the answer was reserved, then when the instrument accepted it (ms since the epoch) */
  at: number;
  outcome: 'in-flight' | 'answered';
  /** the identity of the error answered (fingerprint of title, time stamp, group, severity), when known */
  identity?: string;
  /** a firmware error (on the socket only, never in the error list): its absence from the list does not end it */
  unlisted?: true;
}

export interface AnswerOptions {
  /** who answers, for the audit (a user name, "policy", "flow") */
  by?: string;
  /** the error as the person or rule saw it: an answer to another error under the same id is not "already answered" */
  identity?: ErrorIdentity;
  /**
   * The error is never in the error list (a firmware error, pushed on the socket only): the answer is kept while lists
   * are read (so it is not given twice, and lh-error-poll reports the error resolved), until the id is answered for
   * another error (identity) or the ledger is full.
   */
  unlisted?: boolean;
}

/**
 * Whether a kept answer was given to another error than `identity` names (an id the instrument reused). An answer
 * kept without an identity (sent with an id alone) is not taken for an answer to an error whose identity says more
 * than its id: it may have gone to the error that had the id before, so it neither blocks nor is shown for this one.
 */
export function answeredAnother(record: AnswerRecord, identity: ErrorIdentity | undefined): boolean {
  if (!identity || !hasFields(identity)) return false;
  const given = record.identity === undefined ? undefined : fromFingerprint(record.errorKey, record.identity);
  if (given === undefined || !hasFields(given)) return true;
  return !sameError(given, identity);
}

/** The slot of one answer in flight: confirm it when the instrument applied it, release it when it did not. */
export interface AnswerSlot {
  confirm(): AnswerRecord;
  release(): void;
}

/** Answers kept after they were given, per instrument: enough for months of errors, bounded. */
export const MAX_ANSWERS_KEPT = 5000;
/** Answers kept per id once their errors are over (several errors in turn under one reused id). */
const PAST_PER_ID = 4;

/**
 * At most one answer per error from this Node-RED, whoever asks first: a second caller is refused before any
 * request is sent. One ledger per interface of an instrument, in its home (src/instrument), shared by every client
 * (and so every lh-server node) of it.
 */
export class AnswerLedger {
  private readonly records = new Map<string, AnswerRecord>();
  /** answers to errors that are over (no longer listed): shown to whoever asks, never blocking a new answer */
  private readonly past = new Map<string, AnswerRecord[]>();
  /**
   * The ledger's own order of events (see stamp): what forgetOver compares. Never the records' `at`, which is the wall
   * clock's: set back (NTP, a resumed VM) it dated an answer after every list for the step's length, so its error's
   * id stayed "already answered" when the instrument reused it; set back between a list asked for and an answer
   * confirmed, it dated the answer before that list, which forgot it (a second answer by id then went out).
   */
  private tick = 0;
  private readonly confirmedTick = new WeakMap<AnswerRecord, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The answer given to this error; with `identity`, none when the answer went to another error under that id. */
  lookup(errorKey: string, identity?: ErrorIdentity): AnswerRecord | undefined {
    const found = this.records.get(errorKey);
    return found && !answeredAnother(found, identity) ? { ...found } : undefined;
  }

  /** Takes the error's slot for this answer, or throws `already-answered` naming the answer already given. */
  reserve(errorKey: string, response: string, operation: string, options: AnswerOptions = {}): AnswerSlot {
    const existing = this.records.get(errorKey);
    if (existing && existing.outcome === 'answered' && answeredAnother(existing, options.identity)) {
      this.retire(errorKey, existing); // an answer to the error that had this id before: that error is over
    } else if (existing) throw alreadyAnsweredHere(existing, operation);
    // this very error answered here and over since (a stale msg, a second link): refused without a request, which the
    // instrument could only refuse, or, had it reused the id meanwhile, apply to the error that holds it now
    const given = this.answeredBefore(errorKey, options.identity);
    if (given) throw alreadyAnsweredHere(given, operation);
    const record: AnswerRecord = { errorKey, response, at: this.now(), outcome: 'in-flight' };
    if (options.by !== undefined && options.by !== '') record.by = options.by;
    if (options.identity) record.identity = fingerprint(options.identity);
    if (options.unlisted === true) record.unlisted = true;
    this.records.set(errorKey, record);
    let settled = false;
    return {
      confirm: () => {
        settled = true;
        record.outcome = 'answered';
        record.at = this.now();
        this.confirmedTick.set(record, ++this.tick);
        this.prune();
        return { ...record };
      },
      release: () => {
        if (settled) return;
        settled = true;
        if (this.records.get(errorKey) === record) this.records.delete(errorKey);
      },
    };
  }

  /**
   * The instrument listed its open errors (`listed`, asked for at `askedAt`, a stamp()): an error answered before that
   * and no longer listed is over, so its id may come back as a new error (an instrument restarted, ids made from
   * codes). Answers in flight, answers given after the list was asked for, and answers to unlisted (firmware) errors
   * are kept.
   */
  forgetOver(listed: ReadonlySet<string>, askedAt: number): void {
    for (const [key, record] of this.records) {
      if (record.outcome !== 'answered' || record.unlisted || listed.has(key)) continue;
      if ((this.confirmedTick.get(record) ?? Infinity) > askedAt) continue;
      this.retire(key, record);
    }
  }

  private retire(key: string, record: AnswerRecord): void {
    this.records.delete(key);
    const earlier = this.past.get(key) ?? [];
    this.past.delete(key);
    // the last few errors that had this id (an instrument reusing ids), newest last
    this.past.set(key, [...earlier, record].slice(-PAST_PER_ID));
    if (this.past.size > MAX_ANSWERS_KEPT) this.past.delete(this.past.keys().next().value as string);
  }

  /**
   * The answer given to an error that is over (see forgetOver); an id reused by a new error may be listed again.
   * With `identity`, only an answer given to that very error (never one to another error that had the id).
   */
  lookupPast(errorKey: string, identity?: ErrorIdentity): AnswerRecord | undefined {
    const kept = this.past.get(errorKey) ?? [];
    for (let i = kept.length - 1; i >= 0; i--) if (!answeredAnother(kept[i], identity)) return { ...kept[i] };
    return undefined;
  }

  /**
   * The answer given to this very error before it was over: only an identity with a time stamp, equal in every field
   * (an id reused for a new error with the same title, group and severity is told apart by its time stamp alone; an
   * identity without one cannot tell it, and a new error under the id is answered as the README says).
   */
  private answeredBefore(errorKey: string, identity: ErrorIdentity | undefined): AnswerRecord | undefined {
    if (!identity || identity.fields.d === undefined) return undefined;
    const fp = fingerprint(identity);
    return (this.past.get(errorKey) ?? []).find((r) => r.identity === fp);
  }

  /** When a list of open errors is asked for, in the ledger's order of events (not a time): for forgetOver. */
  stamp(): number {
    return ++this.tick;
  }

  get size(): number {
    return this.records.size;
  }

  private prune(): void {
    if (this.records.size <= MAX_ANSWERS_KEPT) return;
    for (const [key, record] of this.records) {
      if (record.outcome !== 'answered') continue;
      this.records.delete(key);
      if (this.records.size <= MAX_ANSWERS_KEPT) return;
    }
  }
}

function alreadyAnsweredHere(existing: AnswerRecord, operation: string): LhError {
  const who = existing.by ? ` by ${existing.by}` : '';
  const state = existing.outcome === 'answered' ? 'was already answered' : 'is being answered';
  return new LhError(`error ${existing.errorKey} ${state}${who} with "${existing.response}"`, {
    kind: 'already-answered',
    operation,
    body: { ...existing },
  });
}

/**
 * With the error's slot held (so concurrent answers are refused without a request): the error the caller saw
 * (`options.identity`) against what the instrument lists under its id now (`list()`); another error there throws
 * `changed`, several different errors there throw `ambiguous` (LH_AMBIGUOUS: the instrument cannot tell which one an
 * answer by id is for), and nothing is sent. A failed read throws too (nothing is sent unchecked).
 */
export async function checkStillTheSame(
  list: () => Promise<readonly unknown[]>,
  options: AnswerOptions,
  operation: string,
): Promise<void> {
  const expected = options.identity;
  if (!expected || !Object.values(expected.fields).some((f) => f !== undefined)) return;
  const listed = listedUnder(await list(), expected);
  if (listed.kind === 'ambiguous') {
    const body = listed.records.slice(0, 10);
    throw new LhError(ambiguousMessage(expected.id, listed.records), { kind: 'ambiguous', operation, body });
  }
  if (listed.kind === 'changed') {
    throw new LhError(changedMessage(expected.id, listed.record), { kind: 'changed', operation, body: listed.record });
  }
}

/** The error was answered before this answer reached it (409 or an "already handled" refusal). */
export function alreadyAnsweredThere(errorKey: string, operation: string, cause: LhError, detail: string): LhError {
  return new LhError(`error ${errorKey} was already answered: ${detail}`, {
    kind: 'already-answered',
    operation,
    statusCode: cause.statusCode,
    body: cause.body,
    attempts: cause.attempts,
  });
}

/**
 * A 409, or a refusal (4xx, or the instrument's `success: false`) whose text says the error was already handled: an
 * answer that may have been refused because someone answered first. Only `saysAlreadyHandled` settles that; a 409
 * that does not say so is told by the instrument's record of the error (see `conflictRefusal`).
 */
export function isAlreadyHandled(err: LhError): boolean {
  return err.statusCode === 409 || saysAlreadyHandled(err);
}

/** A refusal (4xx, or the instrument's `success: false`) whose text says the error was already handled or answered. */
export function saysAlreadyHandled(err: LhError): boolean {
  const refusal = err.kind === 'instrument' || (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500);
  return refusal && /already (been )?(handled|answered)/i.test(`${err.message} ${JSON.stringify(err.body ?? '')}`);
}

/**
 * A 409 whose text does not say the error was already handled, while the instrument still shows the error pending (or
 * its state cannot be read): a refusal for another reason, not an answer someone else gave. `pending`: what the
 * instrument's record of the error says now (undefined: it could not be read).
 */
export function conflictRefusal(errorKey: string, operation: string, cause: LhError, pending: boolean | undefined): LhError {
  const state =
    pending === undefined
      ? 'whether it is still pending could not be read'
      : 'the instrument still lists it as pending, so nobody answered it';
  return new LhError(`${operation}: the instrument refused the answer to error ${errorKey} (${cause.message}); ${state}`, {
    kind: 'instrument',
    operation,
    statusCode: cause.statusCode,
    body: cause.body,
    attempts: cause.attempts,
  });
}

/** The error keys (`id` for A, `uuid` for B) of a list of open errors, as the ledger keys them. */
export function listedKeys(list: readonly unknown[], field: 'id' | 'uuid'): Set<string> {
  const keys = new Set<string>();
  for (const e of list) {
    const key = e && typeof e === 'object' ? (e as Record<string, unknown>)[field] : undefined;
    if (typeof key === 'string' || typeof key === 'number') keys.add(String(key));
  }
  return keys;
}

/** Host names of this machine's loopback interface, as the URL parser writes them: one instrument, one key. */
const LOOPBACK_HOSTS = new Set(['localhost', 'localhost.', '127.0.0.1', '[::1]', '[::ffff:7f00:1]']);

/**
 * The URL as the ledger's (and the start claim's) key: scheme, host and port, path without trailing slashes, in
 * lower case; the loopback aliases (localhost, 127.0.0.1, ::1) are one host and a default port is no port.
 */
export function urlKey(url: string): string {
  try {
    const u = new URL(url.trim());
    const host = LOOPBACK_HOSTS.has(u.hostname.toLowerCase()) ? 'localhost' : u.hostname;
    const port = u.port === '' ? '' : `:${u.port}`; // the parser leaves out a scheme's default port
    return `${u.protocol}//${host}${port}${u.pathname.replace(/\/+$/, '')}`.toLowerCase();
  } catch {
    return url.trim().replace(/\/+$/, '').toLowerCase();
  }
}

/** The answers of one instrument, A's and B's, as `client.answers` shows them. */
export class InstrumentAnswers {
  constructor(
    readonly a: AnswerLedger,
    readonly b?: AnswerLedger,
  ) {}

  lookup(errorKey: string, identity?: ErrorIdentity): AnswerRecord | undefined {
    return this.a.lookup(errorKey, identity) ?? this.b?.lookup(errorKey, identity);
  }

  /** The answer this Node-RED gave to an error the instrument no longer lists (for "who answered" pages). */
  lookupPast(errorKey: string, identity?: ErrorIdentity): AnswerRecord | undefined {
    return this.a.lookupPast(errorKey, identity) ?? this.b?.lookupPast(errorKey, identity);
  }
}

/** A claim in an answer ledger shared with other Node-REDs (coordination): the first claim wins across all of them. */
export type SharedAnswerClaim =
  { ok: true; confirm(): Promise<void>; release(): Promise<void> } | { ok: false; existing: AnswerRecord & { replica?: string } };

/** The ledger an instrument's answers are claimed in before they are sent, when several Node-REDs share it. */
export interface SharedAnswerClaims {
  /** `automatic`: a policy's answer, claimed under the lease (refused with a FencedError once another replica holds it) */
  claim(
    source: 'A' | 'B',
    errorKey: string,
    response: string,
    options: AnswerOptions & { automatic?: boolean },
  ): Promise<SharedAnswerClaim>;
}
