/**
 * Reading a node's configured inputs against the msg: typed inputs (msg, flow, global, env, JSONata, ...),
 * checkboxes, choices that may come from the msg, and mustache templates. Not the lh-settings node, not RED.settings.
 */
import Mustache from 'mustache';

import { LhError, validate as v } from '../../client';
import { clippedText, shownInLog } from '../../observe/whole-characters';
import { type Node, type NodeMessage, type Red } from './node-red';

/** Types of a typedInput whose value is looked up rather than literal. */
const LOOKUP_TYPES = new Set(['msg', 'flow', 'global', 'env', 'jsonata', 'json', 'num', 'bool', 'date']);

/** Renders a mustache template over msg without HTML escaping (ids and texts are not HTML). */
export function renderTemplate(template: string, view: unknown): string {
  return Mustache.render(template, view, {}, { escape: (s: string) => s });
}

/**
 * A setting's value looked up as its typedInput says. A lookup that fails (a JSONata expression that does not parse or
 * throws, a msg or context path that is no path) is refused naming the setting: JSONata throws plain objects, not
 * Errors, which reached Catch nodes as "[object Object]", with no field and as an answer of the instrument.
 */
function evaluate(RED: Red, node: Node, msg: NodeMessage, name: string, value: unknown, type: string): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    // Declared for strings; the runtime also takes the numbers and booleans a hand-written flow may hold.
    RED.util.evaluateNodeProperty(value as string, type, node, msg, (err, result: unknown) =>
      err ? reject(err) : resolve(result),
    );
  }).catch((err: unknown) => {
    throw lookupFailed(node.type, name, type, err);
  });
}

/** The refusal of a setting whose lookup failed: names the setting, its type and why, in one line. */
export function lookupFailed(operation: string, name: string, type: string, err: unknown): LhError {
  const given = (err as { message?: unknown } | null)?.message;
  const why = typeof given === 'string' && given !== '' ? given : String(err);
  return new LhError(`${name}: this node's ${name} setting (${type}) could not be read: ${clippedText(shownInLog(why), 200)}`, {
    kind: 'validation',
    operation,
    field: name,
  });
}

/**
 * A setting's mustache template rendered over msg. One that does not parse (a typo: `{{payload.id}`, an unclosed
 * section) is refused naming the setting: Mustache's own error ("Unclosed tag at 13") named none.
 */
export function renderSetting(template: string, msg: NodeMessage, name: string, operation: string): string {
  try {
    return renderTemplate(template, msg);
  } catch (err) {
    throw lookupFailed(operation, name, 'template', err);
  }
}

/**
 * Why a setting's mustache template cannot be rendered (a tag or a section not closed), refused naming the setting;
 * undefined when it parses. For a template checked once, at deploy, rather than on each msg.
 */
export function templateProblem(template: string, name: string, operation: string): LhError | undefined {
  try {
    Mustache.parse(template);
    return undefined;
  } catch (err) {
    return lookupFailed(operation, name, 'template', err);
  }
}

/**
 * One setting of an edit dialog, resolved the way core nodes do it: a typedInput pointing at msg/flow/global/env
 * is looked up; a text is rendered as a mustache template over msg; an empty setting falls back to `msg[name]`.
 */
export async function resolveSetting(
  RED: Red,
  node: Node,
  msg: NodeMessage,
  name: string,
  value: unknown,
  type: unknown,
): Promise<unknown> {
  if (value === undefined || value === null || value === '') return msg[name];
  if (typeof type === 'string' && LOOKUP_TYPES.has(type)) return evaluate(RED, node, msg, name, value, type);
  if (typeof value === 'string' && value.includes('{{')) return renderSetting(value, msg, name, node.type);
  return value;
}

/**
 * An answer set in a node's dialog (a literal: not looked up in msg, flow, global, env or JSONata, not a template)
 * that a msg contradicts with its own `msg[name]` is refused before anything is sent: the instrument would get the
 * dialog's answer for a msg that chose another (an lh-answer-error set to Ignore answered Ignore for a msg that said
 * Abort). A `msg[name]` that agrees (as `same` compares, by default as text), or a setting that takes the msg, is no
 * contradiction.
 */
export function refuseContradicted(
  msg: NodeMessage,
  name: string,
  value: unknown,
  type: unknown,
  chosen: unknown,
  operation: string,
  same: (asked: unknown, chosen: unknown) => boolean = (a, b) => String(a) === String(b),
): void {
  const literal =
    value !== undefined &&
    value !== null &&
    value !== '' &&
    !(typeof type === 'string' && ['msg', 'flow', 'global', 'env', 'jsonata'].includes(type)) &&
    !(typeof value === 'string' && value.includes('{{'));
  const asked = msg[name];
  if (!literal || asked === undefined || asked === null || asked === '' || same(asked, chosen)) return;
  throw new LhError(
    `msg.${name} is ${JSON.stringify(asked)} but this node's ${name} is ${JSON.stringify(chosen)}, set in its dialog: ` +
      `nothing was sent (leave it empty in the dialog to take it from the msg, or remove msg.${name})`,
    { kind: 'validation', operation, field: name },
  );
}

/**
 * Whether two values name the same whole number as the field's check reads them (`3`, `"3"`, `" 3"`, `"03"`: one
 * action id); values that are no whole number are compared as text.
 */
export function sameWholeNumber(a: unknown, b: unknown): boolean {
  const whole = (x: unknown): number | undefined => {
    try {
      return v.int32(x, 'value', 'compare');
    } catch {
      return undefined;
    }
  };
  const x = whole(a);
  const y = whole(b);
  return x !== undefined && y !== undefined ? x === y : String(a) === String(b);
}

/** A checkbox setting: ticked is `true` (or `'true'`, as a flow written by hand may hold it). */
export function isChecked(value: unknown): boolean {
  return value === true || value === 'true';
}

/** A checkbox that may come from the msg: ticked means true; unticked takes `msg[name]` (a boolean) when present. */
export function resolveFlag(value: unknown, msg: NodeMessage, name: string, operation: string): boolean | undefined {
  if (isChecked(value)) return true;
  const given = msg[name];
  return given === undefined || given === null ? undefined : v.strictBoolean(given, name, operation);
}

/** A choice (select) setting: empty or "msg" takes `msg[name]`. */
export function resolveChoice(msg: NodeMessage, name: string, value: unknown): unknown {
  return value === undefined || value === '' || value === 'msg' ? msg[name] : value;
}

/**
 * Characters that show as nothing (zero-width spaces and joiners, the byte-order mark, the word joiner, soft hyphen,
 * direction marks: Unicode's format characters; the Hangul fillers): a name holding one looks like another on screen.
 */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/u;

/**
 * Refuses a `msg[name]` text that holds a character that shows as nothing (INVISIBLE): `"abort\u200B"` named no
 * operation, so a node left it alone as a msg passing on and ran its dialog's (an lh-run set to start started a run
 * for a msg asking to abort), and `"\u200B"` alone read as no operation. Said with the character's code point and place.
 */
export function refuseInvisible(asked: unknown, name: string, nodeType: string): void {
  if (typeof asked !== 'string') return;
  const found = INVISIBLE.exec(asked);
  if (!found) return;
  const code = `U+${(found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  // as JSON (quotes and controls escaped), each invisible character as its \u escape
  const visible = JSON.stringify(clippedText(asked, 60)).replace(
    new RegExp(INVISIBLE.source, 'gu'),
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
  throw new LhError(
    `msg.${name} must not contain invisible characters: ${visible} has ${code} at position ${found.index + 1}, ` +
      `so it names no ${name} anyone can read: nothing was sent (type the ${name}'s name without it, or remove msg.${name})`,
    { kind: 'validation', operation: nodeType, field: name },
  );
}

/** Whether `asked`, without its invisible characters, trimmed and in lower case, is empty or one of `operations`. */
function looksLikeOperation(asked: string, operations: readonly string[]): boolean {
  const bare = asked.replace(new RegExp(INVISIBLE.source, 'gu'), '').trim().toLowerCase();
  return bare === '' || operations.includes(bare);
}

/**
 * The operation of an operation node: the dialog's, or msg.operation when the dialog says "from msg". A msg whose
 * msg.operation names another of this node's `operations` than the one chosen in the dialog is refused before anything
 * is sent: running the dialog's operation instead would do what the msg did not ask (an lh-run left at its default,
 * start, would start a run for msg.operation = "abort", or "Abort", or " abort "), and the dialog is never silently
 * overridden either. A msg.operation that is none of this node's operations in any letter case or spacing (a msg
 * passing on from another node) is left alone, unless it holds an invisible character and names one of them or
 * nothing without it (refuseInvisible).
 */
export function resolveOperation(msg: NodeMessage, value: unknown, operations: readonly string[], nodeType: string): unknown {
  const chosen = resolveChoice(msg, 'operation', value);
  const asked = msg.operation;
  // refused where it would name an operation (taken from the msg, or one of this node's without the invisible
  // characters, or none at all): a text of a msg passing on that names none (a Persian word with its zero-width
  // non-joiner, an emoji joined by U+200D) is left alone as any other
  if (typeof asked === 'string' && (chosen === asked || looksLikeOperation(asked, operations)))
    refuseInvisible(asked, 'operation', nodeType);
  // "Abort" or " abort " from a button or a form names abort too: not a msg passing on from another node
  const named = typeof asked === 'string' ? asked.trim().toLowerCase() : undefined;
  if (typeof asked === 'string' && asked !== chosen && named !== chosen && named !== undefined && operations.includes(named)) {
    throw new LhError(
      `msg.operation is "${asked}" but this node's operation is "${String(chosen)}", chosen in its dialog: nothing was sent ` +
        '(choose "from msg.operation" in the dialog to take the operation from the msg, or remove msg.operation)',
      { kind: 'validation', operation: nodeType, field: 'operation' },
    );
  }
  return chosen;
}
