import {
  type PendingError,
  type PendingErrorDataItem,
  type RuntimeErrorAnswer,
  validate as v,
  validationError,
} from '../../client';
import { responseNames } from '../shared/error-records';
import { type NodeMessage } from '../shared/node-red';
import { readPendingError } from '../shared/poll-messages';

const OP = 'answer-error';

/** The error to answer, when msg.payload is the record lh-error-poll emitted (it lists its responses). */
export function pendingErrorIn(payload: unknown): PendingError | undefined {
  return readPendingError(payload);
}

function checkOffered(response: string, offered: string[], field: string, what: string): void {
  if (offered.length > 0 && !offered.includes(response)) {
    throw validationError(OP, field, `must be one of the responses ${what} offers: ${offered.join(', ')}`, response);
  }
}

/** Per-item responses from msg.errorDataResponses: a map `{itemId: response}` or an array of `{id, selectedResponse}`. */
function itemResponses(value: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value === undefined || value === null) return out;
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => {
      const o = v.plainObject(item, `errorDataResponses[${i}]`, OP);
      const id = o.id;
      if (typeof id !== 'string' && typeof id !== 'number') {
        throw validationError(OP, `errorDataResponses[${i}].id`, 'must be the id of an errorData item', id);
      }
      out.set(String(id), o.selectedResponse ?? o.response);
    });
    return out;
  }
  if (v.isPlainObject(value)) {
    for (const [id, response] of Object.entries(value)) out.set(id, response);
    return out;
  }
  throw validationError(
    OP,
    'errorDataResponses',
    'must be an object {itemId: response} or an array of {id, selectedResponse}',
    value,
  );
}

/**
 * The PUT errors/runtime body for `error`, checked against what the error offers: the main response, and one
 * response per errorData item (the item's own from errorDataResponses, else the main one).
 */
export function answerBody(
  error: PendingError,
  selected: unknown,
  perItem: unknown,
  groupIdOverride?: unknown,
): RuntimeErrorAnswer {
  const response = v.nonEmptyString(selected, 'selectedResponse', OP, 200);
  const offered = responseNames(error.errorResponses);
  checkOffered(response, offered, 'selectedResponse', `error ${error.id}`);

  const items = (Array.isArray(error.errorData) ? (error.errorData as unknown[]) : []).filter(isAnswerableItem);
  const given = itemResponses(perItem);
  const known = new Set(items.map((item) => String(item.id)));
  for (const id of given.keys()) {
    if (!known.has(id)) {
      const list = known.size > 0 ? [...known].join(', ') : 'none';
      throw validationError(OP, `errorDataResponses.${id}`, `is not an errorData item of error ${error.id} (items: ${list})`);
    }
  }
  const errorData = items.map((item) => {
    const id = String(item.id);
    const field = `errorDataResponses.${id}`;
    const chosen = given.has(id) ? v.nonEmptyString(given.get(id), field, OP, 200) : response;
    const itemOffered = responseNames(item.errorResponses);
    checkOffered(
      chosen,
      itemOffered.length > 0 ? itemOffered : offered,
      given.has(id) ? field : 'selectedResponse',
      `item ${id}`,
    );
    return { id, selectedResponse: chosen };
  });

  // Real instruments may apply answers per item: an error without items is answered as its own one item.
  if (errorData.length === 0) errorData.push({ id: String(error.id), selectedResponse: response });

  const groupId = error.groupId ?? (typeof groupIdOverride === 'string' && groupIdOverride !== '' ? groupIdOverride : undefined);
  const body: RuntimeErrorAnswer = { id: error.id, selectedResponse: response, errorData };
  if (groupId !== undefined) body.groupId = groupId;
  return body;
}

/**
 * An errorData item the instrument can match an answer to: one with an id (text or a number). One without is left out
 * of the answer (its id would go out as "undefined"), as the answer page leaves it out of its choices; an error whose
 * items all lack one is answered as its own one item.
 */
function isAnswerableItem(item: unknown): item is PendingErrorDataItem {
  if (!v.isPlainObject(item)) return false;
  const { id } = item;
  return (typeof id === 'string' && id.trim() !== '') || (typeof id === 'number' && Number.isFinite(id));
}

/** Who answers, for the audit: msg.answeredBy when the flow says so, else this node. */
export function answeredBy(msg: NodeMessage, nodeName: string): string {
  return typeof msg.answeredBy === 'string' && msg.answeredBy !== '' ? msg.answeredBy : `node ${nodeName}`;
}
