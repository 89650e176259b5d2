import {
  alreadyAnsweredThere,
  AnswerLedger,
  type AnswerOptions,
  checkStillTheSame,
  conflictRefusal,
  isAlreadyHandled,
  listedKeys,
  saysAlreadyHandled,
} from './answer-ledger';
import { type ErrorIdentity, mayBeTheError } from './error-identity';
import { LhError, validationError } from './errors';
import { type Sender } from './prep';
import { type UnsignedSpec } from './session';
import { type ApiResponse } from './transport';
import {
  type DetailedErrorRecovery,
  type ErrorRecovery,
  type InputValue,
  type InstrumentError,
  type ResultWrapper,
} from './types';
import * as v from './validate';

type BSpec = Omit<UnsignedSpec, 'api'>;

export type RecoveryKind = 'recovery' | 'action';

/** Interface B, the instrument control interface: error handler, unhandled errors, recovery submissions. */
export class InstrumentApi {
  /** `answers`: the ledger of this instrument's B errors (shared by every client of it). */
  constructor(
    private readonly sendB: Sender,
    private readonly answers: AnswerLedger = new AnswerLedger(),
  ) {}

  private send<T>(spec: BSpec): Promise<ApiResponse<T>> {
    return this.sendB<T>({ ...spec, api: 'B' });
  }

  async registerErrorHandler(key: unknown): Promise<string> {
    const op = 'register-error-handler';
    const res = await this.send<unknown>({
      method: 'POST',
      path: '/error-handler',
      operation: op,
      body: v.clientKey(key, 'clientKey', op),
      idempotent: true,
    });
    return textResult(res.data, 'Error handler registered', op, res.status);
  }

  async unregisterErrorHandler(key: unknown): Promise<string> {
    const op = 'unregister-error-handler';
    const res = await this.send<unknown>({
      method: 'DELETE',
      path: '/error-handler',
      operation: op,
      body: v.clientKey(key, 'clientKey', op),
      idempotent: true,
    });
    return textResult(res.data, 'Error handler unregistered', op, res.status);
  }

  async isErrorHandlerRegistered(): Promise<boolean> {
    const op = 'check-error-handler';
    const res = await this.send<unknown>({ method: 'GET', path: '/error-handler', operation: op, idempotent: true });
    const answer = booleanOf(res.data);
    if (answer !== undefined) return answer;
    // in a result wrapper (2.9's, or the succeeded/value one of the same API): its refusal, or the boolean it carries
    // (`result` is the value here, as in the {result, message} wrapper: the flag is success or succeeded)
    const flag = resultFlag(res.data, CHECK_FLAGS);
    if (flag === false) {
      throw new LhError(`${op} was refused: ${saidBy(res.data) ?? 'no reason given'}`, {
        kind: 'instrument',
        operation: op,
        statusCode: res.status,
        body: res.data,
      });
    }
    if (flag === true) {
      const w = res.data as Record<string, unknown>;
      const carried = booleanOf(w.data ?? w.value ?? w.result);
      if (carried !== undefined) return carried;
    }
    throw new LhError(`${op}: expected true or false from the instrument`, { kind: 'response', operation: op, body: res.data });
  }

  async unhandledErrors(): Promise<InstrumentError[]> {
    const op = 'unhandled-errors';
    const askedAt = this.answers.stamp();
    const res = await this.send<ResultWrapper<InstrumentError[]>>({
      method: 'GET',
      path: '/instrument-errors/unhandled',
      operation: op,
      idempotent: true,
      deepAnswer: 'cut',
    });
    const list = unhandledList(res.data, res.status);
    this.answers.forgetOver(listedKeys(list, 'uuid'), askedAt);
    return list;
  }

  /** Whether the instrument still lists the error as unhandled (undefined: the list could not be read). */
  private async stillUnhandled(uuid: string, seen?: ErrorIdentity): Promise<boolean | undefined> {
    try {
      const lower = uuid.toLowerCase();
      // with `seen` (the error the answer was for): only that error, not another one listed under a reused uuid
      return (await this.unhandledErrors()).some(
        (e) =>
          !!e && typeof e.uuid === 'string' && e.uuid.toLowerCase() === lower && e.handled !== true && mayBeTheError(e, seen),
      );
    } catch {
      return undefined;
    }
  }

  /**
   * Submits once, never retried, and at most once per error from this Node-RED (see AnswerLedger).
   * `success: false` becomes an error carrying the instrument's message; "already handled" becomes `already-answered`.
   */
  async submit(kind: RecoveryKind, recovery: ErrorRecovery, options: AnswerOptions = {}): Promise<ResultWrapper<string>> {
    const op = kind === 'recovery' ? 'submit-recovery' : 'submit-action';
    const body = errorRecovery(recovery, op);
    const slot = this.answers.reserve(body.uuid, String(body.selectedActionId), op, options);
    try {
      await checkStillTheSame(() => this.unhandledErrors(), options, op);
      const res = await this.send<ResultWrapper<string>>({
        method: 'POST',
        path: `/instrument-errors/${encodeURIComponent(body.uuid)}/${kind}`,
        operation: op,
        body,
        idempotent: false,
      });
      const wrapper = res.data;
      if (!wrapper || resultFlag(wrapper) !== true) {
        throw new LhError(`${op} for error ${body.uuid} was refused: ${saidBy(wrapper) ?? 'no reason given'}`, {
          kind: 'instrument',
          operation: op,
          statusCode: res.status,
          body: wrapper,
        });
      }
      slot.confirm();
      return wrapper;
    } catch (err) {
      slot.release();
      // "no such error" for an error the instrument still lists, or when the list cannot be read: refused (a person
      // must act), not "not pending" (which nobody is told of)
      if (err instanceof LhError && err.statusCode === 404 && err.kind === 'http') {
        const listed = await this.stillUnhandled(body.uuid, options.identity);
        if (listed !== false) throw conflictRefusal(body.uuid, op, err, listed);
        throw err;
      }
      if (err instanceof LhError && isAlreadyHandled(err)) {
        // a 409 that does not say "already handled", with the error still unhandled: refused for another reason
        const pending = saysAlreadyHandled(err) ? false : await this.stillUnhandled(body.uuid);
        if (pending !== false) throw conflictRefusal(body.uuid, op, err, pending);
        throw alreadyAnsweredThere(body.uuid, op, err, 'the instrument says it was already handled');
      }
      throw err;
    }
  }
}

/** true or false, as JSON or as the text of one (any letter case); undefined for anything else. */
function booleanOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const t = value.trim().toLowerCase();
  return t === 'true' || t === 'false' ? t === 'true' : undefined;
}

/** The names a B result wrapper gives its outcome: 2.9's `success`, and `succeeded` and `result` of the same API. */
const RESULT_FLAGS = ['success', 'succeeded', 'result'] as const;
/** The check's flags: its `result` is the boolean it answers ({result, message}), not an outcome. */
const CHECK_FLAGS = ['success', 'succeeded'] as const;

/**
 * The outcome flag of a B result wrapper: `success` as interfaces.md 2.9 names it, or `succeeded` or `result`, the
 * names other operations of the same API use (`{succeeded, message, hasValue, value}`, `{result, message}`,
 * observed-instrument.md), each a boolean or the text of one. Any of them false: false (a refusal is never read as
 * done because another name said true); else true when one says so; undefined: none says either.
 */
export function resultFlag(wrapper: unknown, names: readonly string[] = RESULT_FLAGS): boolean | undefined {
  if (typeof wrapper !== 'object' || wrapper === null || Array.isArray(wrapper)) return undefined;
  const w = wrapper as Record<string, unknown>;
  let said: boolean | undefined;
  for (const name of names) {
    const flag = booleanOf(w[name]);
    if (flag === false) return false;
    if (flag === true) said = true;
  }
  return said;
}

/** The message of a result wrapper, when it is a text that says something. */
function saidBy(wrapper: unknown): string | undefined {
  if (typeof wrapper !== 'object' || wrapper === null) return undefined;
  const message = (wrapper as Record<string, unknown>).message;
  return typeof message === 'string' && message.trim() !== '' ? message : undefined;
}

/**
 * The errors of an unhandled-errors answer: `data` (or `value`, or `result`, in the other wrappers of the same API),
 * an array; none when the wrapper says success with no list (null or left out). A failure (any flag false) is the
 * instrument's refusal; "no errors" (an empty list, or none) is read only where the wrapper says success, and any
 * other answer is refused as unreadable. A list that names errors is read also where no flag is given (they are
 * reported); a flag saying failure refuses it.
 */
export function unhandledList(body: unknown, status?: number): InstrumentError[] {
  const op = 'unhandled-errors';
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new LhError(`${op}: the instrument answered without a result`, { kind: 'response', operation: op, body });
  }
  const w = body as Record<string, unknown>;
  const ok = resultFlag(w);
  if (ok === false) {
    throw new LhError(`${op}: ${saidBy(w) ?? 'the instrument reported a failure'}`, {
      kind: 'instrument',
      operation: op,
      statusCode: status,
      body,
    });
  }
  const list = w.data !== undefined && w.data !== null ? w.data : (w.value ?? (Array.isArray(w.result) ? w.result : undefined));
  if (Array.isArray(list) && (list.length > 0 || ok === true)) return list as InstrumentError[];
  if ((list === undefined || list === null) && ok === true) return [];
  throw new LhError(`${op}: expected {data: [errors], message, success} from the instrument`, {
    kind: 'response',
    operation: op,
    statusCode: status,
    body,
  });
}

/**
 * The success text of a registration (a text, as interfaces.md gives it; no content: `fallback`). An answer in a
 * result wrapper (2.9's, or the other wrappers of the same API) that says failure, or a bare false, is the instrument's
 * refusal, never reported as done; one saying success gives its message. A wrapper saying neither is done only when
 * it carries a text (as a bare text is); anything else is refused as unreadable, not taken for done.
 */
function textResult(data: unknown, fallback: string, op: string, status: number): string {
  if (typeof data === 'string') return data !== '' ? data : fallback;
  if (data === undefined || data === null || data === true) return fallback;
  const flag = data === false ? false : resultFlag(data);
  if (flag === false) {
    throw new LhError(`${op} was refused: ${saidBy(data) ?? 'no reason given'}`, {
      kind: 'instrument',
      operation: op,
      statusCode: status,
      body: data,
    });
  }
  if (flag === true) return saidBy(data) ?? fallback;
  if (typeof data === 'object' && !Array.isArray(data)) {
    const w = data as Record<string, unknown>;
    const carried = [w.data, w.value, w.result].find((t): t is string => typeof t === 'string' && t.trim() !== '');
    if (carried !== undefined) return carried;
  }
  throw new LhError(`${op}: expected a text or {success, message} from the instrument, which said neither success nor failure`, {
    kind: 'response',
    operation: op,
    statusCode: status,
    body: data,
  });
}

function inputValues(value: unknown, field: string, op: string): InputValue[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw validationError(op, field, 'must be an array of {id, value}', value);
  return value.map((item: unknown, i) => {
    const o = v.plainObject(item, `${field}[${i}]`, op);
    const val = o.value;
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') {
      throw validationError(op, `${field}[${i}].value`, 'must be a text', val);
    }
    return { id: v.int32(o.id, `${field}[${i}].id`, op), value: String(val) };
  });
}

/** Validates a complete ErrorRecovery body (2.8); the uuid also goes into the path, so it is checked before sending. */
export function errorRecovery(r: ErrorRecovery, op: string): ErrorRecovery {
  const uuid = v.uuid(r.uuid, 'uuid', op);
  const detailed = r.detailedErrorRecoveries;
  let detailedOut: DetailedErrorRecovery[] | null = null;
  if (detailed !== undefined && detailed !== null) {
    if (!Array.isArray(detailed)) throw validationError(op, 'detailedErrorRecoveries', 'must be an array', detailed);
    detailedOut = detailed.map((d: unknown, i) => {
      const o = v.plainObject(d, `detailedErrorRecoveries[${i}]`, op);
      const f = `detailedErrorRecoveries[${i}]`;
      return {
        date: o.date === undefined ? new Date().toISOString() : v.dateTime(o.date, `${f}.date`, op),
        uuid: v.uuid(o.uuid, `${f}.uuid`, op),
        inputs: inputValues(o.inputs, `${f}.inputs`, op) ?? [],
        selectedActionId: v.int32(o.selectedActionId, `${f}.selectedActionId`, op),
        selectedActionIsRecovery: v.strictBoolean(o.selectedActionIsRecovery, `${f}.selectedActionIsRecovery`, op),
      };
    });
  }
  return {
    date: v.dateTime(r.date, 'date', op),
    uuid,
    detailedErrorRecoveries: detailedOut,
    inputs: inputValues(r.inputs, 'inputs', op),
    selectedActionId: v.int32(r.selectedActionId, 'selectedActionId', op),
    selectedActionIsRecovery: v.strictBoolean(r.selectedActionIsRecovery, 'selectedActionIsRecovery', op),
    errorHandlingKey: r.errorHandlingKey === null ? null : v.clientKey(r.errorHandlingKey, 'errorHandlingKey', op),
  };
}
