import { SOFTWARE_SETTING_FIELDS } from '../contract/instrument-contract';
import {
  alreadyAnsweredThere,
  AnswerLedger,
  type AnswerOptions,
  type AnswerRecord,
  checkStillTheSame,
  conflictRefusal,
  isAlreadyHandled,
  listedKeys,
  saysAlreadyHandled,
} from './answer-ledger';
import { type ErrorIdentity, mayBeTheError } from './error-identity';
import { LhError, validationError } from './errors';
import { CHECK_AUTHENTICATION, type UnsignedSpec } from './session';
import { type ApiResponse, MEDIA_JSON, MEDIA_JSON_PATCH } from './transport';
import {
  type AuthResult,
  type ClearResult,
  type ErrorList,
  type ErrorRecord,
  type ListStepsQuery,
  type PagingQuery,
  type PendingError,
  type PolicySettings,
  type ReorderItem,
  type RuntimeErrorAnswer,
  type ServiceRoutine,
  type SoftwareSettings,
  type Step,
  type StepBody,
} from './types';
import * as v from './validate';

export type Sender = <T>(spec: UnsignedSpec) => Promise<ApiResponse<T>>;

/** check-authentication: does the instrument still accept the session's token (Test connection, the session check). */
export { CHECK_AUTHENTICATION };
type ASpec = Omit<UnsignedSpec, 'api'>;

const SOFTWARE_SETTING_TYPES = SOFTWARE_SETTING_FIELDS;

/** Interface A, the preparation service: every operation validates its input before anything is sent. */
export class PrepApi {
  /** `answers`: the ledger of this instrument's A errors (shared by every client of it). */
  constructor(
    private readonly sendA: Sender,
    private readonly answers: AnswerLedger = new AnswerLedger(),
  ) {}

  private send<T>(spec: ASpec): Promise<ApiResponse<T>> {
    return this.sendA<T>({ ...spec, api: 'A' });
  }

  /** The answer's body. A GET answered 2xx without a body (a wrong URL, a proxy) is an error, unless `emptyOk`. */
  private async data<T>(spec: ASpec, emptyOk = false): Promise<T> {
    const res = await this.send<T>(spec);
    if (spec.method === 'GET' && !emptyOk && (res.data === undefined || res.data === null)) {
      throw new LhError(
        `${spec.operation}: the preparation service (A) answered ${res.status} without a body where JSON was expected; check the URL in the lh-server node`,
        {
          kind: 'response',
          operation: spec.operation,
          statusCode: res.status,
        },
      );
    }
    return res.data;
  }

  // --- authentication helpers that are not part of the session lifecycle ---

  async checkAuthentication(): Promise<void> {
    await this.sendA(CHECK_AUTHENTICATION);
  }

  async changeExpiredPassword(userName: string, oldPassword: string, newPassword: string): Promise<void> {
    const op = 'change-expired-password';
    await this.send({
      method: 'POST',
      path: '/authenticate/change-expired-password',
      operation: op,
      mediaType: MEDIA_JSON_PATCH,
      body: {
        userName: v.nonEmptyString(userName, 'userName', op),
        oldPassword: v.nonEmptyString(oldPassword, 'oldPassword', op),
        newPassword: v.nonEmptyString(newPassword, 'newPassword', op),
      },
      idempotent: false,
      anonymous: true,
    });
  }

  setupWizard(): Promise<AuthResult> {
    return this.data({
      method: 'POST',
      path: '/authenticate/setup-wizard',
      operation: 'setup-wizard',
      idempotent: false,
      anonymous: true,
    });
  }

  kbaPasswordReset(): Promise<AuthResult> {
    return this.data({
      method: 'POST',
      path: '/authenticate/kba-password-reset',
      operation: 'kba-password-reset',
      idempotent: false,
      anonymous: true,
    });
  }

  // --- protocol steps (4.1) ---

  async createStep(protocolId: unknown, body: unknown, makeNameUnique?: boolean): Promise<Step> {
    const op = 'create-step';
    const step = stepBody(body, op);
    if (step.name === undefined) throw validationError(op, 'payload.name', 'is required to create a step');
    v.nonEmptyString(step.name, 'payload.name', op);
    if (makeNameUnique !== undefined) step.makeNameUnique = makeNameUnique;
    return this.data({
      method: 'POST',
      path: `${protocolPath(protocolId, op)}/step`,
      operation: op,
      mediaType: MEDIA_JSON_PATCH,
      body: step,
      idempotent: false,
    });
  }

  async updateStep(protocolId: unknown, body: unknown, makeNameUnique?: boolean): Promise<Step | undefined> {
    const op = 'update-step';
    const step = stepBody(body, op);
    step.id = v.databaseId(step.id, 'payload.id', op);
    if (makeNameUnique !== undefined) step.makeNameUnique = makeNameUnique;
    return this.data({
      method: 'PUT',
      path: `${protocolPath(protocolId, op)}/step`,
      operation: op,
      mediaType: MEDIA_JSON,
      body: step,
      idempotent: true,
    });
  }

  async listSteps(protocolId: unknown, query: ListStepsQuery = {}): Promise<Step[]> {
    const op = 'list-steps';
    return this.data({
      method: 'GET',
      path: `${protocolPath(protocolId, op)}/step`,
      operation: op,
      query: {
        offset: v.optionalInt32(query.offset, 'offset', op),
        limit: v.optionalInt32(query.limit, 'limit', op, 1),
        includeFullStepData: v.optionalBoolean(query.includeFullStepData, 'includeFullStepData', op),
        includeCustomLiquidSettings: v.optionalBoolean(query.includeCustomLiquidSettings, 'includeCustomLiquidSettings', op),
      },
      idempotent: true,
    });
  }

  async getStep(protocolId: unknown, stepId: unknown, includeCustomLiquidSettings?: boolean): Promise<Step> {
    const op = 'get-step';
    return this.data({
      method: 'GET',
      path: stepPath(protocolId, '', stepId, op),
      operation: op,
      query: { includeCustomLiquidSettings },
      idempotent: true,
    });
  }

  async reorderSteps(protocolId: unknown, items: unknown): Promise<void> {
    const op = 'reorder-steps';
    await this.send({
      method: 'PUT',
      path: `${protocolPath(protocolId, op)}/step/reorder-step`,
      operation: op,
      mediaType: MEDIA_JSON,
      body: reorderItems(items, op),
      idempotent: true,
    });
  }

  async renameStep(protocolId: unknown, stepId: unknown, newName: unknown): Promise<void> {
    const op = 'rename-step';
    await this.send({
      method: 'PUT',
      path: stepPath(protocolId, '/rename', stepId, op),
      operation: op,
      mediaType: MEDIA_JSON,
      body: { newName: v.nonEmptyString(newName, 'newName', op) },
      idempotent: true,
    });
  }

  async setStepDisabled(protocolId: unknown, stepId: unknown, disabled: boolean): Promise<void> {
    const op = disabled ? 'disable-step' : 'enable-step';
    await this.send({
      method: 'PUT',
      path: stepPath(protocolId, '/disable', stepId, op),
      operation: op,
      mediaType: MEDIA_JSON,
      body: { disabled },
      idempotent: true,
    });
  }

  async deleteStep(protocolId: unknown, stepId: unknown): Promise<void> {
    const op = 'delete-step';
    await this.send({
      method: 'DELETE',
      path: stepPath(protocolId, '', stepId, op),
      operation: op,
      idempotent: true,
      alreadyDoneStatus: 404,
    });
  }

  // --- errors (4.3) ---

  async listErrors(query: PagingQuery = {}): Promise<ErrorList> {
    const op = 'list-errors';
    return this.data({
      method: 'GET',
      path: '/errors',
      operation: op,
      query: { offset: v.optionalInt32(query.offset, 'offset', op), limit: v.optionalInt32(query.limit, 'limit', op, 1) },
      idempotent: true,
    });
  }

  async getError(errorId: unknown): Promise<ErrorRecord> {
    const op = 'get-error';
    return this.data({
      method: 'GET',
      path: `/errors/${encodeURIComponent(v.errorId(errorId, 'errorId', op))}`,
      operation: op,
      idempotent: true,
      deepAnswer: 'cut',
    });
  }

  async pendingErrors(): Promise<PendingError[]> {
    const op = 'check-for-pending-errors';
    const askedAt = this.answers.stamp();
    const list = await this.data<unknown>(
      { method: 'GET', path: '/errors/check-for-pending-errors', operation: op, idempotent: true, deepAnswer: 'cut' },
      true,
    );
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list)) {
      throw new LhError(`${op}: expected an array of pending errors from the instrument`, {
        kind: 'response',
        operation: op,
        body: list,
      });
    }
    this.answers.forgetOver(listedKeys(list, 'id'), askedAt);
    return list as PendingError[];
  }

  /**
   * Answers a pending error once for this Node-RED (see AnswerLedger). A 409 saying "already handled", or one for an
   * error the instrument shows handled, means someone answered first (any other 409 is a refusal); on a
   * resent attempt the earlier one may have been ours, so the error is read back: only when the instrument shows
   * this very response is it reported as answered, otherwise `already-answered`.
   */
  async answerRuntimeError(answer: RuntimeErrorAnswer, options: AnswerOptions = {}): Promise<AnswerRecord> {
    const op = 'answer-error';
    const id = String(answer.id);
    const slot = this.answers.reserve(id, answer.selectedResponse, op, options);
    try {
      await checkStillTheSame(() => this.pendingErrors(), options, op);
    } catch (err) {
      slot.release();
      throw err;
    }
    try {
      await this.send({
        method: 'PUT',
        path: '/errors/runtime',
        operation: op,
        mediaType: MEDIA_JSON,
        body: answer,
        idempotent: true,
        // a resend goes by id too: only while the instrument lists the error that was seen under it (the lost reply's
        // attempt may have been applied, and an instrument that reuses ids may list a new error there by now)
        beforeResend: (failure) => this.stillTheSameForResend(id, options, failure),
      });
      return slot.confirm();
    } catch (err) {
      if (err instanceof LhError && err.statusCode === 404 && err.kind === 'http') {
        slot.release();
        // "no such error" for an error the instrument still lists, or when the list cannot be read: refused (a person
        // must act), not "not pending" (which nobody is told of)
        const listed = await this.stillListed(id, options.identity);
        if (listed !== false) throw conflictRefusal(id, op, err, listed);
        throw err;
      }
      if (!(err instanceof LhError) || !isAlreadyHandled(err)) {
        slot.release();
        throw err;
      }
      const record = err.attempts > 1 || !saysAlreadyHandled(err) ? await this.readError(id) : undefined;
      if (err.attempts > 1 && record?.selectedResponse === answer.selectedResponse) return slot.confirm();
      slot.release();
      // a 409 that does not say "already handled", with the error still pending: refused for another reason
      if (!saysAlreadyHandled(err) && record?.handled !== true) throw conflictRefusal(id, op, err, record && !record.handled);
      throw alreadyAnsweredThere(
        id,
        op,
        err,
        err.attempts > 1
          ? 'an earlier attempt got no answer and the instrument does not show this response as the one applied'
          : `the instrument refused this answer (${err.statusCode ?? 'no status'})`,
      );
    }
  }

  /**
   * Before an answer is resent: the error listed under `id` is still the one that was seen (as before the first
   * attempt). Otherwise (another error or several there now, or the list cannot be read) nothing more is sent, and the
   * answer fails as the attempt before did: it may have been applied.
   */
  private async stillTheSameForResend(id: string, options: AnswerOptions, failure: LhError): Promise<void> {
    try {
      await checkStillTheSame(() => this.pendingErrors(), options, failure.operation);
    } catch (err) {
      const why =
        err instanceof LhError && (err.kind === 'changed' || err.kind === 'ambiguous')
          ? err.message
          : `the list of errors could not be read to check error ${id} (${err instanceof Error ? err.message : String(err)})`;
      throw new LhError(`${failure.message}; not resent: ${why}`, {
        kind: failure.kind,
        operation: failure.operation,
        ...(failure.statusCode !== undefined ? { statusCode: failure.statusCode } : {}),
        ...(failure.body !== undefined ? { body: failure.body } : {}),
        ...(failure.code.startsWith('LH_') ? {} : { code: failure.code }),
        attempts: failure.attempts,
      });
    }
  }

  /**
   * Whether the instrument lists error `id` as pending now (undefined: the list could not be read); with `seen` (the
   * error the answer was for), only that error: another one listed under a reused id is not it.
   */
  private async stillListed(id: string, seen?: ErrorIdentity): Promise<boolean | undefined> {
    try {
      return (await this.pendingErrors()).some(
        (e) => !!e && typeof e === 'object' && String(e.id) === id && e.handled !== true && mayBeTheError(e, seen),
      );
    } catch {
      return undefined;
    }
  }

  /** The instrument's record of one error (its `handled` flag and the response applied), undefined when unreadable. */
  private async readError(id: string): Promise<{ handled: boolean; selectedResponse?: string } | undefined> {
    try {
      const record = (await this.getError(id)) as unknown;
      if (!record || typeof record !== 'object') return undefined;
      const { handled, selectedResponse } = record as { handled?: unknown; selectedResponse?: unknown };
      return { handled: handled === true, ...(typeof selectedResponse === 'string' ? { selectedResponse } : {}) };
    } catch {
      return undefined;
    }
  }

  /** Sent once: a lost answer is reported as a failure, never resent into a second, misleading count. */
  clearErrors(): Promise<ClearResult> {
    return this.data({ method: 'PUT', path: '/errors/clear-errors', operation: 'clear-errors', idempotent: false });
  }

  // --- settings and verification (4.4) ---

  getSoftwareSettings(): Promise<SoftwareSettings> {
    return this.data({
      method: 'GET',
      path: '/settings/software-settings',
      operation: 'get-software-settings',
      idempotent: true,
    });
  }

  async setSoftwareSettings(settings: unknown): Promise<void> {
    const op = 'set-software-settings';
    await this.send({
      method: 'POST',
      path: '/settings/software-settings',
      operation: op,
      mediaType: MEDIA_JSON_PATCH,
      body: softwareSettings(settings, op, true),
      idempotent: true,
    });
  }

  getPolicySettings(): Promise<PolicySettings> {
    return this.data({ method: 'GET', path: '/settings/policy-settings', operation: 'get-policy-settings', idempotent: true });
  }

  listServiceRoutines(): Promise<ServiceRoutine[]> {
    return this.data({
      method: 'GET',
      path: '/verification/service-routines',
      operation: 'list-service-routines',
      idempotent: true,
    });
  }

  async getServiceRoutine(id: unknown): Promise<ServiceRoutine> {
    const op = 'get-service-routine';
    return this.data({
      method: 'GET',
      path: `/verification/service-routines/${v.databaseId(id, 'routineId', op)}`,
      operation: op,
      idempotent: true,
    });
  }

  async updateServiceRoutine(routine: unknown): Promise<void> {
    const op = 'update-service-routine';
    await this.send({
      method: 'PUT',
      path: '/verification/service-routines',
      operation: op,
      mediaType: MEDIA_JSON_PATCH,
      body: serviceRoutine(routine, op),
      idempotent: true,
    });
  }

  /** One request without a session (no login): any answer of the service, even 401, tells that it is there. */
  async probe(): Promise<void> {
    await this.send({
      method: 'GET',
      path: '/authenticate/check-authentication',
      operation: 'check-authentication',
      idempotent: true,
      anonymous: true,
    });
  }
}

function protocolPath(protocolId: unknown, op: string): string {
  return `/protocols/${v.databaseId(protocolId, 'protocolId', op)}`;
}

function stepPath(protocolId: unknown, action: string, stepId: unknown, op: string): string {
  return `${protocolPath(protocolId, op)}/step${action}/${v.databaseId(stepId, 'stepId', op)}`;
}

function stepBody(body: unknown, op: string): StepBody {
  const step = { ...v.plainObject(body, 'payload', op) };
  v.stepType(step.stepType, 'payload.stepType', op);
  if (step.name !== undefined) v.nonEmptyString(step.name, 'payload.name', op);
  if (step.stepOrder !== undefined) step.stepOrder = v.int32(step.stepOrder, 'payload.stepOrder', op, 0);
  if (step.disabled !== undefined) v.strictBoolean(step.disabled, 'payload.disabled', op);
  if (step.makeNameUnique !== undefined) v.strictBoolean(step.makeNameUnique, 'payload.makeNameUnique', op);
  return step as StepBody;
}

/** Accepts `[{stepId, stepOrder}]` or an ordered array of step ids (positions counted from 1). */
export function reorderItems(items: unknown, op: string): ReorderItem[] {
  if (!Array.isArray(items) || items.length === 0) {
    throw validationError(
      op,
      'payload',
      'must be a non-empty array of {stepId, stepOrder} or of step ids in the new order',
      items,
    );
  }
  const seen = new Set<number>();
  return items.map((item: unknown, i) => {
    let out: ReorderItem;
    if (v.isPlainObject(item)) {
      out = {
        stepId: v.databaseId(item.stepId, `payload[${i}].stepId`, op),
        stepOrder: v.int32(item.stepOrder, `payload[${i}].stepOrder`, op, 0),
      };
    } else {
      out = { stepId: v.databaseId(item, `payload[${i}]`, op), stepOrder: i + 1 };
    }
    if (seen.has(out.stepId)) throw validationError(op, `payload[${i}]`, `repeats step ${out.stepId}`);
    seen.add(out.stepId);
    return out;
  });
}

/** Keys that reach an object's prototype when copied (`__proto__`) or name it: never a setting. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function softwareSettings(value: unknown, op: string, complete: boolean): Partial<SoftwareSettings> {
  const input = v.plainObject(value, 'payload', op);
  const forbidden = Object.keys(input).find((field) => FORBIDDEN_KEYS.has(field));
  if (forbidden !== undefined) {
    throw validationError(op, `payload.${forbidden}`, 'is not allowed: a settings payload names software settings only');
  }
  const out: Record<string, unknown> = {};
  for (const [field, type] of Object.entries(SOFTWARE_SETTING_TYPES)) {
    const given = input[field];
    if (given === undefined) {
      if (complete) throw validationError(op, `payload.${field}`, 'is required');
      continue;
    }
    out[field] = type === 'boolean' ? v.strictBoolean(given, `payload.${field}`, op) : v.int32(given, `payload.${field}`, op);
  }
  for (const field of Object.keys(input)) {
    if (!Object.prototype.hasOwnProperty.call(SOFTWARE_SETTING_TYPES, field)) {
      throw validationError(
        op,
        `payload.${field}`,
        `is not a software setting (known: ${Object.keys(SOFTWARE_SETTING_TYPES).join(', ')})`,
      );
    }
  }
  return out as Partial<SoftwareSettings>;
}

export function serviceRoutine(value: unknown, op: string): ServiceRoutine {
  const r = { ...v.plainObject(value, 'payload', op) };
  r.id = v.databaseId(r.id, 'payload.id', op);
  if (r.name !== undefined && r.name !== null && typeof r.name !== 'string') {
    throw validationError(op, 'payload.name', 'must be a text or null', r.name);
  }
  if (r.isRecommended !== undefined) v.strictBoolean(r.isRecommended, 'payload.isRecommended', op);
  if (r.lastRun !== undefined && r.lastRun !== null) v.dateTime(r.lastRun, 'payload.lastRun', op);
  return r as ServiceRoutine;
}
