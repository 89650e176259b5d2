/** What the page's form says beside the button: the chosen action's input values (B) and per-item answers (A). */

const MAX_FIELDS = 50;

export interface AnswerFields {
  /** `input.<action>.<id>` of the chosen action, by input id (empty fields left out) */
  inputs: Record<string, string>;
  /** `item.<id>` answers chosen (undefined when every item takes the main answer) */
  items?: Record<string, string>;
}

export function answerFields(form: URLSearchParams, chosen: string | null | undefined): AnswerFields {
  const inputs: Record<string, string> = {};
  const items: Record<string, string> = {};
  let n = 0;
  for (const [name, value] of form) {
    if (++n > MAX_FIELDS) break;
    const input = /^input\.(-?\d+)\.(-?\d+)$/.exec(name);
    if (input && input[1] === chosen && value.trim() !== '') inputs[input[2]] = value;
    const item = /^item\.(.+)$/.exec(name);
    if (item && value !== '') items[item[1]] = value;
  }
  return { inputs, ...(Object.keys(items).length > 0 ? { items } : {}) };
}
