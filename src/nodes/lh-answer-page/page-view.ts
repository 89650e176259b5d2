/** What the page shows of an error: built from the record the instrument lists, without Node-RED. */
import { answeredAnother, type AnswerRecord, type ErrorIdentity } from '../../client';
import { type DeclaredInput, describeInput, inputsOfAction } from '../answering/action-inputs';
import { defaultActionOf } from '../answering/answer-error';
import { offeredActions, responseNames } from '../shared/error-records';
import { zonedTime } from '../shared/zoned-time';
import { type AnswerOption, type ErrorView, type InputField, type ItemChoice } from './page-html';

type ErrorRecord = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

function inputField(d: DeclaredInput): InputField {
  const numeric = d.type === 'number' || d.type === 'integer';
  return {
    id: d.id,
    label: d.description,
    kind: numeric ? 'number' : 'text',
    ...(numeric && d.min !== undefined ? { min: d.min } : {}),
    ...(numeric && d.max !== undefined ? { max: d.max } : {}),
    ...(numeric ? { step: d.type === 'integer' ? '1' : 'any' } : {}),
    ...(d.defaultValue !== undefined ? { value: d.defaultValue } : {}),
    hint: describeInput(d),
    required: d.required,
  };
}

export function answerOptions(source: 'A' | 'B', record: ErrorRecord): AnswerOption[] {
  if (source === 'A') return responseNames(record.errorResponses).map((r) => ({ value: r, label: r }));
  const defaultId = defaultActionOf(record);
  const raw = Array.isArray(record.actions) ? (record.actions as unknown[]) : [];
  return (offeredActions(record) ?? []).map((a) => {
    const action = raw.find(
      (x): x is Record<string, unknown> => !!x && typeof x === 'object' && (x as Record<string, unknown>).id === a.id,
    );
    const inputs = inputsOfAction(action).map(inputField);
    return {
      value: String(a.id),
      label: a.description ? a.description : `Action ${a.id}`,
      isDefault: a.id === defaultId,
      ...(inputs.length > 0 ? { inputs } : {}),
    };
  });
}

/** The items of an A error that offer responses of their own (other than the error's): each is answered on its own. */
export function itemChoices(source: 'A' | 'B', record: ErrorRecord): ItemChoice[] {
  if (source !== 'A' || !Array.isArray(record.errorData)) return [];
  const main = responseNames(record.errorResponses);
  const out: ItemChoice[] = [];
  for (const item of record.errorData as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const o = item as Record<string, unknown>;
    if (typeof o.id !== 'string' && typeof o.id !== 'number') continue;
    const options = responseNames(o.errorResponses);
    if (options.length === 0 || (options.length === main.length && options.every((r) => main.includes(r)))) continue;
    const name = [o.description, o.title, o.message, o.name].find((x): x is string => typeof x === 'string' && x !== '') ?? '';
    out.push({ id: String(o.id), label: name ? `Item ${String(o.id)} (${name})` : `Item ${String(o.id)}`, options });
  }
  return out;
}

export function errorView(
  source: 'A' | 'B',
  errorKey: string,
  record: ErrorRecord,
  instrument: string,
  expires: number,
): ErrorView {
  const raw = source === 'A' ? (record.timeStamp ?? record.date) : (record.date ?? record.timeStamp);
  return {
    instrument,
    source,
    errorKey,
    title: text(record.title) || text(record.type) || 'Runtime error',
    message: text(record.message),
    severity: text(record.severity) || 'Error',
    time: zonedTime(raw),
    options: answerOptions(source, record),
    items: itemChoices(source, record),
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
 * Why the main answer cannot go to every item: an item (with responses of its own) left "as the answer below" that
 * does not offer it. Said on the page in words, before anything is sent.
 */
export function itemProblem(
  record: ErrorRecord,
  chosen: string,
  perItem: Record<string, string> | undefined,
): string | undefined {
  for (const item of itemChoices('A', record)) {
    const own = perItem?.[item.id];
    if (own === undefined && !item.options.includes(chosen)) {
      return `${item.label} does not offer "${chosen}"; it offers ${item.options.join(', ')}. Choose an answer for it and send again.`;
    }
    if (own !== undefined && !item.options.includes(own))
      return `${item.label} does not offer "${own}"; it offers ${item.options.join(', ')}.`;
  }
  return undefined;
}

/**
 * The answer that stood in the way of this one (a refusal as already answered), as the page may show it: only when it
 * went to the error the link was made for, never to the error that had the id before (in flight, or given by id alone).
 */
export function answerInTheWay(previous: AnswerRecord | undefined, seen: ErrorIdentity | undefined): AnswerRecord | undefined {
  return previous && !answeredAnother(previous, seen) ? previous : undefined;
}
