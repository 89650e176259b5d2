/**
 * What the page's form posts for a choice, without the instrument's words (fix48.4): an instrument may echo a secret
 * into a response name, an action, an item's response or an input's suggested value (`Retry password=hunter2`), and
 * whatever a form carries is in the page's HTML. The form carries positions instead (`#0`, `#1`, … for the button
 * and an item's choice, `input.#<button>.<input id>` for an input) and a signed state: a MAC over the choices the page
 * offered. On a post the server reads the error afresh, checks the state against its choices (the same ones, in the
 * same order) and maps the positions back to the instrument's own names and values.
 *
 * A form shown before (no state field) posts the names themselves (`response=Retry`, `input.<action id>.<id>`,
 * `item.<id>`): it is taken as it always was.
 */
import { createHash } from 'crypto';

import { redact } from '../shared/redaction';
import type { AnswerFields } from './page-fields';
import type { AnswerOption, ItemChoice } from './page-html';

/** The fields a page's form has besides its items and inputs: t, form, o, by, scope and the button pressed (and slack). */
const FRAME_FIELDS = 8;

/**
 * How many fields the page offering `c` posts at most: a browser posts every field of the form (each item's choice and
 * every action's inputs, not only the chosen one's), so a fixed cap dropped the last items' choices and inputs.
 */
function fieldsOffered(c: OfferedChoices): number {
  return c.options.reduce((n, o) => n + (o.inputs?.length ?? 0), FRAME_FIELDS + c.items.length);
}

/** The choices a page offered for one error, in the order shown (from answerOptions and itemChoices). */
export interface OfferedChoices {
  options: AnswerOption[];
  items: ItemChoice[];
}

/** The text the form's state signs: every value and name a position stands for, in order. */
export function choicesDigest(c: OfferedChoices): string {
  const text = JSON.stringify([
    c.options.map((o) => [o.value, (o.inputs ?? []).map((f) => [f.id, f.value ?? null])]),
    c.items.map((i) => [i.id, i.options]),
  ]);
  return createHash('sha256').update(text).digest('base64url');
}

/** Whether the page hides an instrument's text in its form (it would show a secret): redacted, it differs. */
export function looksSecret(text: string): boolean {
  return redact(text) !== text;
}

/** `#<n>` → n, for n within `length`; anything else undefined. */
function position(value: string | null | undefined, length: number): number | undefined {
  const m = /^#(\d{1,4})$/.exec(value ?? '');
  if (!m) return undefined;
  const n = Number(m[1]);
  return n < length ? n : undefined;
}

/** What a form of positions chose, mapped back to the instrument's names: undefined `chosen` when none (or out of range). */
export interface ReadChoice {
  chosen?: string;
  fields: AnswerFields;
  /** an item's choice that names no position the page offered */
  problem?: string;
}

/**
 * Reads a form posted with positions (`field`: `response` (A) or `action` (B)) against the choices offered. An input
 * left empty whose suggested value the page did not show (it looked like a secret) takes that value.
 */
export function readPositions(form: URLSearchParams, field: string, c: OfferedChoices): ReadChoice {
  const at = position(form.get(field), c.options.length);
  const option = at === undefined ? undefined : c.options[at];
  const inputs: Record<string, string> = {};
  const items: Record<string, string> = {};
  let problem: string | undefined;
  const most = fieldsOffered(c);
  let n = 0;
  for (const [name, value] of form) {
    // more fields than the page has: not its form; refused whole, never read in part (a choice past the cap was lost)
    if (++n > most) return { fields: { inputs: {} }, problem: `the form has more fields (over ${most}) than this error's page` };
    const input = /^input\.#(\d{1,4})\.(-?\d+)$/.exec(name);
    if (input && option && Number(input[1]) === at && value.trim() !== '') inputs[input[2]] = value;
    const item = /^item\.#(\d{1,4})$/.exec(name);
    if (item && value !== '') {
      const choice = c.items[Number(item[1])];
      const j = choice ? position(value, choice.options.length) : undefined;
      if (!choice || j === undefined) problem ??= `the form names an item or an item's answer this error does not offer`;
      else items[choice.id] = choice.options[j];
    }
  }
  for (const f of option?.inputs ?? [])
    if (inputs[String(f.id)] === undefined && f.value !== undefined && looksSecret(f.value)) inputs[String(f.id)] = f.value;
  return {
    ...(option ? { chosen: option.value } : {}),
    fields: { inputs, ...(Object.keys(items).length > 0 ? { items } : {}) },
    ...(problem ? { problem } : {}),
  };
}
