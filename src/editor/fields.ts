/**
 * Field helpers shared by the edit dialogs: typed inputs ("from msg" rows), property checks, rows shown for a
 * choice, the context store select and the "pick from the instrument" button.
 */
import type { EditorNode, Validator } from './red';

export const INT32_MAX = 2147483647;
const CONTEXT_TYPES = ['msg', 'flow', 'global', 'env'];

/** The types an instrument id takes: a number, a text (digits or a template), or a msg/flow/global/env property. */
export const ID_TYPES = ['num', 'str', ...CONTEXT_TYPES];

export function wholeNumber(v: unknown, min: number): boolean {
  return /^\s*\d+\s*$/.test(String(v)) && Number(v) >= min && Number(v) <= INT32_MAX;
}

/** A typed input: its default type, and the types it offers (default: the default type, then msg, flow, global, env). */
export interface TypedField {
  type: string;
  types?: string[];
}

/** #node-input-<key> as a typedInput whose type is kept in #node-input-<key>Type. */
export function typedField(key: string, field: TypedField): void {
  $('#node-input-' + key).typedInput({
    default: field.type,
    typeField: $('#node-input-' + key + 'Type'),
    types: field.types ?? [field.type, ...CONTEXT_TYPES],
  });
}

// The type a typedInput field has: the dialog's hidden type input when it has one, else the node's property.
function fieldType(node: EditorNode, key: string, fallback: string): string {
  const input = $('#node-input-' + key + 'Type');
  const value = input.length > 0 ? input.val() : undefined;
  return typeof value === 'string' && value !== ''
    ? value
    : typeof node[key + 'Type'] === 'string'
      ? String(node[key + 'Type'])
      : fallback;
}

function invalid(node: EditorNode, opt: unknown, errorKey: string, args?: Record<string, unknown>): boolean | string {
  return opt ? node._(errorKey, args) : false;
}

/** A check that passes when `ok(value)`, else fails with the text `errorKey`. */
export function check(
  ok: (value: unknown, node: EditorNode) => boolean,
  errorKey: string,
  args?: Record<string, unknown>,
): Validator {
  return function (value, opt) {
    return ok(value, this) || invalid(this, opt, errorKey, args);
  };
}

/** One of `values` (a select). */
export function oneOf(values: readonly string[], errorKey?: string): Validator {
  return function (value, opt) {
    return values.includes(String(value ?? '')) || (errorKey ? invalid(this, opt, errorKey) : false);
  };
}

/** A number from `min` to `max`; `empty` says whether an empty field passes. */
export function numberIn(min: number, max: number, errorKey: string, empty = false): Validator {
  return check(
    (v) => (v === '' || v === undefined ? empty : !isNaN(Number(v)) && Number(v) >= min && Number(v) <= max),
    errorKey,
  );
}

/** Seconds: empty, or a decimal number of at least `min` (greater than `min` when `strict`) and at most `max`. */
export function seconds(min: number, errorKey: string, strict = false, max = Infinity): Validator {
  return check(
    (v) =>
      v === '' ||
      v === undefined ||
      (/^\d+(\.\d+)?$/.test(String(v)) && (strict ? Number(v) > min : Number(v) >= min) && Number(v) <= max),
    errorKey,
    { min },
  );
}

/** A str-typed text: empty, a {{template}}, or matching `pattern`; other types are checked at run time. */
export function typedText(key: string, pattern: RegExp, errorKey: string): Validator {
  return check(
    (v, node) => !v || fieldType(node, key, 'str') !== 'str' || /\{\{/.test(String(v)) || pattern.test(String(v)),
    errorKey,
  );
}

/** A num-typed count: empty or a whole number from `min` to `max` (INT32_MAX when not given). */
export function typedCount(key: string, min: number, errorKey: string, max = INT32_MAX): Validator {
  return check(
    (v, node) =>
      v === '' ||
      v === undefined ||
      fieldType(node, key, 'num') !== 'num' ||
      (/^\d+$/.test(String(v)) && wholeNumber(v, min) && Number(v) <= max),
    errorKey,
  );
}

/** A num-typed integer, negative ones too. */
export function typedInteger(key: string, errorKey: string): Validator {
  return check((v, node) => v === '' || fieldType(node, key, 'num') !== 'num' || /^-?\d+$/.test(String(v)), errorKey);
}

/**
 * An instrument id: str holds digits or a {{template}}, num a whole number >= min, msg/flow/global/env a valid
 * property (Node-RED's own check); empty means the msg property.
 */
export function typedId(key: string, min: number, errorKey: string): Validator {
  return function (v, opt) {
    if (v === undefined || v === null || v === '') return true;
    const type = fieldType(this, key, 'num');
    if (type === 'str') return wholeNumber(v, min) || String(v).includes('{{') || invalid(this, opt, errorKey, { min });
    if (type === 'num') return wholeNumber(v, min) || invalid(this, opt, errorKey, { min });
    return RED.validators.typedInput(key + 'Type').call(this, v, opt);
  };
}

/** Shows each row (selector) when the select's value is "msg" or one of the row's values; now and on change. */
export function showRowsFor(select: string, rows: Record<string, string[]>): void {
  const update = (): void => {
    const value = String($(select).val() ?? '');
    for (const [row, values] of Object.entries(rows)) $(row).toggle(value === 'msg' || values.includes(value));
  };
  $(select).on('change', update);
  update();
}

/** Shows the rows (selector) while the checkbox is checked. */
export function showWhenChecked(checkbox: string, rows: string): void {
  $(checkbox)
    .on('change', function () {
      $(rows).toggle($(this).is(':checked'));
    })
    .trigger('change');
}

/** Fills the select #node-input-<key> with the context stores of settings.js, a first option `hint` meaning the default one. */
export function contextStoreSelect(key: string, hint: string, value: unknown): void {
  const stores = RED.settings.context?.stores ?? [];
  const saved = typeof value === 'string' ? value : '';
  const select = $('#node-input-' + key);
  select.append($('<option>').val('').text(hint));
  for (const s of stores) select.append($('<option>').val(s).text(s));
  if (saved && !stores.includes(saved)) select.append($('<option>').val(saved).text(saved));
  select.val(saved);
}

/** The message of a failed admin request. */
export function requestError(xhr: JQuery.jqXHR): string {
  const body: unknown = xhr.responseJSON;
  const error = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  return typeof error === 'string' && error ? error : xhr.statusText || String(xhr.status);
}

export interface PickerOptions<T> {
  /** The id field it fills (as a number). */
  field: string;
  /** The request path after lh-server/<server>/. */
  path(): string;
  label(item: T): string;
  /** A pick.* text key that stops the request, or '' to go on. */
  check?(): string;
  /** Show pick.loading while waiting. */
  loading?: boolean;
}

/**
 * Optional "pick from the instrument" button beside an id field: #<prefix>-pick lists, through the deployed
 * lh-server node, lh-server/<server>/<path> in #<prefix>-pick-list; choosing one sets #node-input-<field> (type
 * num). Texts: <prefix>.pick.noServer|loading|none|choose|failed, and what check() returns.
 */
export function picker<T extends { id: unknown }>(node: EditorNode, prefix: string, options: PickerOptions<T>): void {
  const hint = $('#' + prefix + '-pick-hint');
  const pickList = $('#' + prefix + '-pick-list');
  const field = $('#node-input-' + options.field);
  const say = (key: string, args?: Record<string, unknown>): void => {
    hint.text(node._(prefix + '.pick.' + key, args)).show();
  };
  $('#' + prefix + '-pick').on('click', () => {
    const server = String($('#node-input-server').val() ?? '');
    pickList.hide();
    if (!server || server === '_ADD_') return say('noServer');
    const stop = options.check?.();
    if (stop) return say(stop);
    if (options.loading) say('loading');
    $.getJSON('lh-server/' + encodeURIComponent(server) + '/' + options.path())
      .done((items: T[] | null) => {
        if (!items || items.length === 0) return say('none');
        hint.hide();
        pickList.empty();
        $('<option>')
          .val('')
          .text(node._(prefix + '.pick.choose'))
          .appendTo(pickList);
        for (const item of items) $('<option>').val(String(item.id)).text(options.label(item)).appendTo(pickList);
        pickList.show();
      })
      .fail((xhr: JQuery.jqXHR) => say('failed', { error: requestError(xhr) }));
  });
  pickList.on('change', function () {
    const id = String($(this).val() ?? '');
    if (id === '') return;
    field.typedInput('type', 'num');
    field.typedInput('value', id);
  });
}
