/**
 * Runtime errors of interface A (4.3): pending errors waiting for an answer and the error history.
 *
 * Choices where interfaces.md is silent: ids are UUIDs; the history lists newest first; answering an error
 * already handled is 409; a response the error does not offer, or an errorData id it does not have, is 400;
 * a groupId that is sent but differs from the error's is 400. An error without errorData items may be answered
 * with `errorData: [{id: <the error's id>, selectedResponse}]`, as public client code tested on a real instrument
 * does (observed-instrument.md). Clearing handles every pending error except those of severity 'Fatal', which are
 * counted as not cleared and stay pending.
 */
import { randomUUID } from 'crypto';

import { field, FieldErrors, isObject, optionalString, parseIntQuery, requireObject, requireString } from './json-fields';
import { badRequest, HttpProblem, notFound } from './problem';
import type { ClearResult, ErrorList, ErrorRecord, PendingError, PendingErrorSeed, Severity } from './types';

/** the history is bounded so that a simulator left running for months stays small */
export const MAX_HISTORY = 10_000;
export const DEFAULT_RESPONSES = ['Retry', 'Abort', 'Ignore'];
const SEVERITIES: Severity[] = ['Warning', 'Error', 'Fatal'];

export class RuntimeErrorBook {
  /** every injected runtime error, handled ones included */
  private all: PendingError[] = [];
  history: ErrorRecord[] = [];
  private nextCode = 1001;
  /** Told whenever an error gets handled (answered, resolved on the instrument or cleared): a run waits for it. */
  onHandled?: (error: PendingError) => void;

  clear(): void {
    this.all = [];
    this.history = [];
    this.nextCode = 1001;
  }

  /** the errors still waiting for an answer (the live array's members, for the read-only state view) */
  get pending(): PendingError[] {
    return this.all.filter((e) => !e.handled);
  }

  inject(seed: Partial<PendingErrorSeed> = {}): PendingError {
    const id = seed.id ?? randomUUID();
    if (seed.reuseId === true) {
      // as real instruments do after a restart, or once the old error left the list: the id names a new error;
      // an error still pending under it is gone (the instrument forgot it), unless both stay listed (alongside)
      if (seed.alongside !== true) this.all = this.all.filter((e) => e.id !== id || e.handled);
    } else if (this.history.some((r) => r.id === id)) throw new HttpProblem(409, `An error with id '${id}' already exists.`);
    const severity = seed.severity && SEVERITIES.includes(seed.severity) ? seed.severity : 'Warning';
    const responses = seed.responses && seed.responses.length > 0 ? [...seed.responses] : [...DEFAULT_RESPONSES];
    const now = new Date().toISOString();
    const groupId = seed.groupId ?? randomUUID();
    const title = seed.title ?? 'Liquid level not detected';
    const message = seed.message ?? 'No liquid was detected while aspirating from the reagent trough.';
    const error: PendingError = {
      id,
      title,
      message,
      errorResponses: responses.map((response) => ({ response })),
      selectedResponse: null,
      timeStamp: now,
      severity,
      groupId,
      errorData: (seed.errorData ?? []).map((item) => ({
        id: item.id,
        description: item.description ?? `Item ${item.id}`,
        errorResponses: (item.responses && item.responses.length > 0 ? item.responses : responses).map((response) => ({
          response,
        })),
        selectedResponse: null,
      })),
      handled: false,
    };
    this.all.push(error);
    if (this.history.length >= MAX_HISTORY) this.history.shift();
    this.history.push({
      id,
      code: seed.code ?? this.nextCode++,
      innerError: {},
      message,
      type: 'Runtime',
      severity,
      date: now,
      handledDateTime: null,
      handled: false,
      responses,
      groupId,
    });
    return clone(error);
  }

  /** The error an id names now: the pending one, else the newest (ids may be reused). */
  private current(id: string): PendingError | undefined {
    return this.all.find((e) => e.id === id && !e.handled) ?? [...this.all].reverse().find((e) => e.id === id);
  }

  /** GET check-for-pending-errors */
  unhandled(): PendingError[] {
    return this.pending.filter((e) => !e.handled).map(clone);
  }

  /** GET errors */
  list(query: Record<string, string>): ErrorList {
    const offset = parseIntQuery(query, 'offset', 0);
    const limit = parseIntQuery(query, 'limit', 50);
    const newestFirst = [...this.history].reverse();
    return {
      totalItemCount: newestFirst.length,
      currentOffset: offset,
      items: newestFirst.slice(offset, offset + limit).map(clone),
    };
  }

  /** GET errors/{errorId} */
  record(errorId: string): ErrorRecord {
    const r = [...this.history].reverse().find((x) => x.id === errorId);
    if (!r) throw notFound(`Error '${errorId}' was not found.`);
    return clone(r);
  }

  /** PUT errors/runtime */
  answer(body: unknown): void {
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const id = errors.check(() => requireString(obj, 'id', { nonEmpty: true }));
    const selected = errors.check(() => requireString(obj, 'selectedResponse', { nonEmpty: true }));
    const groupId = errors.check(() => optionalString(obj, 'groupId'));
    const rawItems = field(obj, 'errorData');
    if (rawItems !== undefined && rawItems !== null && !Array.isArray(rawItems))
      errors.add('errorData', 'errorData must be an array.');
    errors.throwIfAny();
    const error = this.current(id as string);
    if (!error) throw notFound(`No runtime error with id '${id}' exists.`);
    if (error.handled)
      throw new HttpProblem(
        409,
        `Runtime error '${id}' has already been handled (response '${error.selectedResponse ?? 'cleared'}').`,
      );
    if (groupId !== undefined && groupId !== '' && groupId !== error.groupId) {
      throw badRequest('groupId', `groupId '${groupId}' does not match the error's group '${error.groupId}'.`);
    }
    const offered = error.errorResponses.map((r) => r.response);
    if (!offered.includes(selected as string)) {
      throw badRequest('selectedResponse', `'${selected}' is not a response of this error; offered: ${offered.join(', ')}.`);
    }
    const answers: { id: string; selectedResponse: string }[] = [];
    const itemErrors = new FieldErrors();
    (Array.isArray(rawItems) ? rawItems : []).forEach((raw: unknown, i: number) => {
      if (!isObject(raw)) return itemErrors.add(`errorData[${i}]`, 'Each item must be an object {id, selectedResponse}.');
      const itemId = itemErrors.check(() => requireString(raw, 'id'));
      const itemResponse = itemErrors.check(() => optionalString(raw, 'selectedResponse'));
      if (itemId === undefined) return;
      if (error.errorData.length === 0 && itemId === error.id) {
        if (itemResponse !== undefined && itemResponse !== selected)
          itemErrors.add(
            `errorData[${i}].selectedResponse`,
            `'${itemResponse}' differs from the error's selectedResponse '${selected}'.`,
          );
        return;
      }
      const item = error.errorData.find((d) => d.id === itemId);
      if (!item) return itemErrors.add(`errorData[${i}].id`, `'${itemId}' is not an errorData item of this error.`);
      const response = itemResponse ?? (selected as string);
      const itemOffered = item.errorResponses.map((r) => r.response);
      if (!itemOffered.includes(response)) {
        return itemErrors.add(
          `errorData[${i}].selectedResponse`,
          `'${response}' is not offered for item '${itemId}'; offered: ${itemOffered.join(', ')}.`,
        );
      }
      answers.push({ id: itemId, selectedResponse: response });
    });
    itemErrors.throwIfAny();
    for (const a of answers) {
      const item = error.errorData.find((d) => d.id === a.id);
      if (item) item.selectedResponse = a.selectedResponse;
    }
    this.markHandled(error, selected as string);
  }

  /** As if the operator answered on the instrument's screen (first offered response). */
  resolve(id: string): void {
    const error = this.current(id);
    if (!error) throw new Error(`no pending error '${id}'`);
    if (!error.handled) this.markHandled(error, error.errorResponses[0]?.response ?? null);
  }

  /** PUT errors/clear-errors */
  clearAll(): ClearResult {
    let cleared = 0;
    let notCleared = 0;
    for (const e of this.pending) {
      if (e.severity === 'Fatal') notCleared++;
      else {
        this.markHandled(e, null);
        cleared++;
      }
    }
    return { numberOfErrorsCleared: cleared, numberOfErrorsNotCleared: notCleared };
  }

  private markHandled(error: PendingError, selected: string | null): void {
    error.handled = true;
    error.selectedResponse = selected;
    const record = [...this.history].reverse().find((r) => r.id === error.id);
    if (record) {
      record.handled = true;
      record.handledDateTime = new Date().toISOString();
      if (selected !== null) record.selectedResponse = selected;
    }
    // handled errors stay known (so a second answer is 409, not 404), bounded
    const handled = this.all.filter((e) => e.handled);
    if (handled.length > 1000) this.all = this.all.filter((e) => e !== handled[0]);
    this.onHandled?.(error);
  }
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
