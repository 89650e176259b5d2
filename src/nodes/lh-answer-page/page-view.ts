/** What the page shows of an error: built from the record the instrument lists, without Node-RED. */
import { AnswerRecord, answeredAnother, ErrorIdentity } from '../../client';
import { defaultActionOf } from '../answering/answer-error';
import { offeredActions, responseNames } from '../shared/error-records';
import { zonedTime } from '../shared/zoned-time';
import { AnswerOption, ErrorView } from './page-html';

type ErrorRecord = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

export function answerOptions(source: 'A' | 'B', record: ErrorRecord): AnswerOption[] {
  if (source === 'A') return responseNames(record.errorResponses).map((r) => ({ value: r, label: r }));
  const defaultId = defaultActionOf(record);
  return (offeredActions(record) ?? []).map((a) => ({
    value: String(a.id),
    label: a.description ? a.description : `Action ${a.id}`,
    isDefault: a.id === defaultId,
  }));
}

export function errorView(source: 'A' | 'B', errorKey: string, record: ErrorRecord, instrument: string, expires: number): ErrorView {
  const raw = source === 'A' ? record.timeStamp ?? record.date : record.date ?? record.timeStamp;
  return {
    instrument,
    source,
    errorKey,
    title: text(record.title) || text(record.type) || 'Runtime error',
    message: text(record.message),
    severity: text(record.severity) || 'Error',
    time: zonedTime(raw),
    options: answerOptions(source, record),
    expires: zonedTime(expires),
  };
}

/** The label of an answer as the page shows it: the response, or the action's description with its id. */
export function answerLabel(source: 'A' | 'B', record: ErrorRecord | undefined, value: string): string {
  if (source === 'A' || !record) return value;
  const action = offeredActions(record)?.find((a) => String(a.id) === value);
  return action?.description ? `${action.description} (action ${value})` : `action ${value}`;
}

/**
 * The answer that stood in the way of this one (a refusal as already answered), as the page may show it: only when it
 * went to the error the link was made for, never to the error that had the id before (in flight, or given by id alone).
 */
export function answerInTheWay(previous: AnswerRecord | undefined, seen: ErrorIdentity | undefined): AnswerRecord | undefined {
  return previous && !answeredAnother(previous, seen) ? previous : undefined;
}
