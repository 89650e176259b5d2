/**
 * The inputs a B action declares (e.g. "Retry with a new aspiration height" needs the height), and the values an
 * answer gives for them: from a policy rule, a msg, or the answer page's fields. Checked before anything is sent: an
 * action that requires an input is never sent without one, and a value outside the declared type or range is refused
 * with the input named (`inputs.<id>`). Pure: no I/O.
 */
import { type InputValue, validationError } from '../../client';

export type InputType = 'number' | 'integer' | 'text' | 'boolean';

/** An input as the error record declares it; what the record leaves out takes the lenient reading. */
export interface DeclaredInput {
  id: number;
  description: string;
  type: InputType;
  min?: number;
  max?: number;
  unit?: string;
  /** false only when the record says so: an input is required unless declared optional */
  required: boolean;
  /** the instrument's suggestion: the page fills it in; a policy step uses it when the rule gives no value */
  defaultValue?: string;
  /** text inputs: the choices, when the record lists them */
  options?: string[];
}

/** Longest input value sent (interface B sends values as text). */
export const MAX_INPUT_VALUE = 200;

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function typeOf(raw: unknown): InputType {
  const t = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (t === 'integer' || t === 'int' || t === 'int32') return 'integer';
  if (t === 'number' || t === 'double' || t === 'float' || t === 'decimal') return 'number';
  if (t === 'boolean' || t === 'bool') return 'boolean';
  return 'text';
}

/** The inputs action `actionId` of a B error record declares (none: an empty list). */
export function declaredInputs(record: unknown, actionId: number): DeclaredInput[] {
  if (!record || typeof record !== 'object') return [];
  const actions = (record as Record<string, unknown>).actions;
  if (!Array.isArray(actions)) return [];
  const action = actions.find(
    (a): a is Record<string, unknown> => !!a && typeof a === 'object' && (a as Record<string, unknown>).id === actionId,
  );
  return inputsOfAction(action);
}

/** The inputs one action object declares. */
export function inputsOfAction(action: Record<string, unknown> | undefined): DeclaredInput[] {
  const inputs = action?.inputs;
  if (!Array.isArray(inputs)) return [];
  const out: DeclaredInput[] = [];
  for (const raw of inputs) {
    if (!raw || typeof raw !== 'object') continue;
    const o = raw as Record<string, unknown>;
    if (typeof o.id !== 'number' || !Number.isInteger(o.id)) continue;
    const declared = o.type ?? o.dataType;
    // no type given: a default value that is a number makes the input a number
    const def = typeof o.defaultValue === 'string' || typeof o.defaultValue === 'number' ? String(o.defaultValue) : undefined;
    const type =
      declared === undefined && def !== undefined && def.trim() !== '' && Number.isFinite(Number(def))
        ? 'number'
        : typeOf(declared);
    const min = num(o.min ?? o.minimum);
    const max = num(o.max ?? o.maximum);
    const options = Array.isArray(o.options) ? o.options.filter((x): x is string => typeof x === 'string') : undefined;
    out.push({
      id: o.id,
      description: typeof o.description === 'string' ? o.description : typeof o.name === 'string' ? o.name : `input ${o.id}`,
      type,
      ...(min !== undefined ? { min } : {}),
      ...(max !== undefined ? { max } : {}),
      ...(typeof o.unit === 'string' && o.unit !== '' ? { unit: o.unit } : {}),
      required: o.required !== false && o.isRequired !== false && o.optional !== true,
      ...(def !== undefined ? { defaultValue: def } : {}),
      ...(options && options.length > 0 ? { options } : {}),
    });
  }
  return out;
}

/** "number from 0 to 10 mm", for messages and the page. */
export function describeInput(input: DeclaredInput): string {
  const range =
    input.min !== undefined && input.max !== undefined
      ? ` from ${input.min} to ${input.max}`
      : input.min !== undefined
        ? ` of at least ${input.min}`
        : input.max !== undefined
          ? ` of at most ${input.max}`
          : '';
  const type = input.type === 'integer' ? 'whole number' : input.type === 'boolean' ? 'true or false' : input.type;
  const options = input.options ? ` (one of ${input.options.join(', ')})` : '';
  return `${type}${range}${input.unit ? ` ${input.unit}` : ''}${options}`;
}

/**
 * Values given for inputs, by id: a list `[{id, value}]` (the body's own shape) or an object `{id: value}`. Bad shapes
 * are refused naming `field`.
 */
export function givenInputs(value: unknown, field: string, op: string): Map<number, string> {
  const out = new Map<number, string>();
  if (value === undefined || value === null || value === '') return out;
  const put = (id: unknown, v: unknown, f: string): void => {
    const n = typeof id === 'number' ? id : typeof id === 'string' && /^-?\d{1,10}$/.test(id.trim()) ? Number(id) : NaN;
    if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31)
      throw validationError(op, f, 'is not an input id (a whole number)', id);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw validationError(op, `${field}.${n}`, 'must be a value (text or number)', v);
    out.set(n, String(v));
  };
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => {
      if (!item || typeof item !== 'object' || Array.isArray(item))
        throw validationError(op, `${field}[${i}]`, 'must be an object {id, value}', item);
      const o = item as Record<string, unknown>;
      put(o.id, o.value, `${field}[${i}].id`);
    });
    return out;
  }
  if (typeof value === 'object') {
    for (const [id, v] of Object.entries(value as Record<string, unknown>)) put(id, v, `${field}.${id}`);
    return out;
  }
  throw validationError(op, field, 'must be an array of {id, value} (or an object {inputId: value})', value);
}

/** A number input's value as sent: plain decimal digits, an optional sign and fraction (no exponent, prefix or `_`). */
const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const INTEGER_TEXT = /^[+-]?\d+$/;
/**
 * Most significant digits a number value may have: up to 15, the decimal text and the number checked are the same
 * value (a longer one such as 0.49999999999999999 would be checked as 0.5).
 */
const MAX_SIGNIFICANT_DIGITS = 15;

/** Digits from the first non-zero one to the last one that counts (zeros ending a fraction do not). */
function significantDigits(text: string): number {
  const exact = text.includes('.') ? text.replace(/0+$/, '') : text;
  return exact.replace(/[^0-9]/g, '').replace(/^0+/, '').length;
}

/** Why `value` is not acceptable for `input`, or undefined when it is. */
export function inputProblem(input: DeclaredInput, value: string): string | undefined {
  const text = value.trim();
  if (value.length > MAX_INPUT_VALUE) return `must be at most ${MAX_INPUT_VALUE} characters`;
  if (input.type === 'number' || input.type === 'integer') {
    // only plain decimals: the text is sent as written, so the instrument must read the number that was checked
    // (0x5, 0b101, 0o5, 5e0, Infinity or 1_000 read as numbers here, and the instrument may read them otherwise)
    const form = input.type === 'integer' ? INTEGER_TEXT : DECIMAL_TEXT;
    if (!form.test(text))
      return `must be a ${describeInput(input)}, written in decimal digits${input.type === 'integer' ? '' : ' (e.g. 2.5)'}`;
    if (significantDigits(text) > MAX_SIGNIFICANT_DIGITS)
      return `must be a ${describeInput(input)} of at most ${MAX_SIGNIFICANT_DIGITS} significant digits`;
    const n = Number(text);
    if (!Number.isFinite(n)) return `must be a ${describeInput(input)}`;
    if (input.type === 'integer' && !Number.isInteger(n)) return `must be a ${describeInput(input)}`;
    if ((input.min !== undefined && n < input.min) || (input.max !== undefined && n > input.max))
      return `must be a ${describeInput(input)}`;
    return undefined;
  }
  if (input.type === 'boolean') return /^(true|false)$/i.test(text) ? undefined : 'must be true or false';
  if (input.options && !input.options.includes(value)) return `must be one of ${input.options.join(', ')}`;
  if (input.required && text === '') return 'must not be empty';
  return undefined;
}

export interface InputCheck {
  /** what the error record declares for the action (undefined: the record lists no actions, so nothing to check against) */
  declared?: DeclaredInput[];
  given: Map<number, string>;
  actionId: number;
  /** take an input's declared default when no value is given (a policy step) */
  useDefaults?: boolean;
  /** the field values are named after ('inputs' for a msg, a rule step's field for a policy) */
  field?: string;
}

/**
 * The `inputs` of the ErrorRecovery body: every declared input that is required has a valid value (given, or the
 * declared default when allowed), no value is given for an input the action does not have. Null when the action
 * takes no inputs and none are given (the body as before). Throws a validation error naming `inputs.<id>`.
 */
export function checkInputs(check: InputCheck, op: string): InputValue[] | null {
  const field = check.field ?? 'inputs';
  const { declared, given } = check;
  if (!declared) return given.size === 0 ? null : [...given].map(([id, value]) => ({ id, value }));
  const known = new Map(declared.map((d) => [d.id, d]));
  for (const id of given.keys()) {
    if (!known.has(id)) {
      const list = declared.length > 0 ? declared.map((d) => `${d.id} (${d.description})`).join(', ') : 'none';
      throw validationError(op, `${field}.${id}`, `is not an input of action ${check.actionId} (its inputs: ${list})`);
    }
  }
  const out: InputValue[] = [];
  for (const input of declared) {
    let value = given.get(input.id);
    if (value === undefined && check.useDefaults && input.defaultValue !== undefined) value = input.defaultValue;
    const what = `(${input.description}, a ${describeInput(input)})`;
    if (value === undefined || (value.trim() === '' && input.required)) {
      if (input.required)
        throw validationError(op, `${field}.${input.id}`, `${what} is required by action ${check.actionId}: nothing was sent`);
      continue;
    }
    const problem = inputProblem(input, value);
    if (problem) throw validationError(op, `${field}.${input.id}`, `${what} ${problem}: nothing was sent`, value);
    out.push({ id: input.id, value: value.trim() });
  }
  if (declared.length === 0) return null;
  return out;
}
