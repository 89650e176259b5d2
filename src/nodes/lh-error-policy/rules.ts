/** The policy's ordered rules: checked once when the node starts, matched per error (first match wins). */
import { RE2JS } from 're2js';

import { LhError } from '../../client';
import { derivedRuleId } from '../../contract/migration-transforms';
import { severityRank } from '../answering/severity';
import type { ErrorSource } from '../shared/poll-messages';

export const MODES = ['manual', 'semi-automatic', 'walk-away'] as const;
export type Mode = (typeof MODES)[number];
export type RuleSource = 'any' | ErrorSource;

/** One rung of a rule's ladder: what the policy does the n-th time an error matches the rule in a run. */
export interface Step {
  mode: Mode;
  /** A: the response; B: the action id; '' on B = the error's own default action */
  answer: string;
  /** semi-automatic: seconds a person has before the default goes out */
  delay: number;
  /** B: values for the inputs the action declares, by input id (text, as interface B sends them) */
  inputs: Record<string, string>;
}

export interface Rule {
  /**
   * The rule's stable identity: the ladder counts are kept under it, so a rule added above, removed above or moved
   * keeps its counts. Given by the dialog; a rule saved without one gets one derived from what it matches.
   */
  id: string;
  source: RuleSource;
  /** '' = any; else Warning, Error or Fatal (an unknown severity of the instrument always matches) */
  minSeverity: string;
  /**
   * a regular expression (case-insensitive, RE2 syntax: linear-time, no backreferences or lookaround) over the title
   * and the message; '' = any
   */
  pattern: string;
  /** the error's code as text; '' = any */
  code: string;
  /**
   * The ladder: the 1st error matching the rule in a run (or, with no run active, in a clock hour) gets step 1, the
   * 2nd step 2, …; the last step answers every later one. A rule saved before 0.3 is a one-step ladder.
   */
  steps: Step[];
}

export interface CompiledRule extends Rule {
  index: number;
  /** the pattern compiled by RE2JS: matching time grows linearly with the text, whatever the pattern */
  regex?: RE2JS;
  minRank?: number;
}

/** What a rule id may be: 1 to 64 letters, digits, `_`, `-`, `.` or `:`. */
const RULE_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Longest pattern a rule may have. */
export const MAX_PATTERN_LENGTH = 500;
/** Characters of `title\nmessage` a pattern is matched against (the rest is ignored): matching stays bounded. */
export const MAX_MATCHED_TEXT = 4096;
/**
 * The largest compiled pattern (RE2's program size, in instructions). RE2 is linear in the text, but its cost per
 * character grows with the program: measured with re2js on 4 KiB texts, programs up to about 1,000 instructions
 * (`[^x]{100}q` is 103, `tip (lost|missing)` 20) match in well under a millisecond, while one of 1,500 or more
 * (`[^x]{1000}[^y]{500}q`, legal and under 500 characters) takes 100 ms to 0.5 s a match (review43).
 */
export const MAX_PROGRAM_SIZE = 1000;

export const DEFAULT_DELAY_S = 120;
const MAX_DELAY_S = 7 * 24 * 3600;
/**
 * Most rules a policy may have: each raised error is matched against them in turn (twice: the lab's rules are asked
 * whether they send it to a person before a run-scoped answer applies), so their number bounds the time an error
 * holds the event loop; it is also the number of rules whose ladder counts a run keeps (runs/run-scope.ts).
 */
export const MAX_RULES = 200;
/** Most steps a ladder may have, and inputs a step may give. */
export const MAX_STEPS = 10;
const MAX_STEP_INPUTS = 20;
const MAX_INPUT_VALUE = 200;
const OP = 'error-policy';

function invalid(field: string, rule: string): LhError {
  return new LhError(`${field} ${rule}`, { kind: 'validation', operation: OP, field });
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
}

/** The dialog's rule list, checked; throws naming the rule and field that are wrong. */
export function compileRules(value: unknown): CompiledRule[] {
  if (value === undefined || value === null || value === '') return [];
  if (!Array.isArray(value)) throw invalid('rules', 'must be a list of rules');
  if (value.length > MAX_RULES) throw invalid('rules', `must be at most ${MAX_RULES} rules (got ${value.length})`);
  const given = new Set<string>();
  value.forEach((raw: unknown, index) => {
    const id = raw && typeof raw === 'object' ? (raw as { id?: unknown }).id : undefined;
    if (id === undefined || id === null || id === '') return;
    if (typeof id !== 'string' || !RULE_ID.test(id))
      throw invalid(`rules[${index}].id`, 'must be 1 to 64 letters, digits, _, -, . or :');
    if (given.has(id)) throw invalid(`rules[${index}].id`, `must be unique (another rule has the id ${id})`);
    given.add(id);
  });
  return value.map((raw: unknown, index) => {
    const f = `rules[${index}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(f, 'must be an object');
    const r = raw as Record<string, unknown>;
    const source = text(r.source) || 'any';
    if (source !== 'any' && source !== 'A' && source !== 'B') throw invalid(`${f}.source`, 'must be any, A or B');
    const minSeverity = text(r.minSeverity);
    const minRank = minSeverity === '' ? undefined : severityRank(minSeverity);
    if (minSeverity !== '' && minRank === undefined) throw invalid(`${f}.minSeverity`, 'must be empty, Warning, Error or Fatal');
    const pattern = text(r.pattern);
    const regex = pattern === '' ? undefined : compilePattern(pattern, `${f}.pattern`);
    // a rule without steps (saved before 0.3, or written by hand) is the one-step ladder of its mode, answer and delay
    const legacy = r.steps === undefined || r.steps === null;
    const rawSteps: unknown = legacy ? [{ mode: r.mode, answer: r.answer, delay: r.delay, inputs: r.inputs }] : r.steps;
    if (!Array.isArray(rawSteps) || rawSteps.length === 0) throw invalid(`${f}.steps`, 'must be a list of at least one step');
    if (rawSteps.length > MAX_STEPS) throw invalid(`${f}.steps`, `must have at most ${MAX_STEPS} steps`);
    const steps = rawSteps.map((raw: unknown, i) => compileStep(raw, legacy ? f : `${f}.steps[${i}]`, source));
    let id = typeof r.id === 'string' && r.id !== '' ? r.id : '';
    if (id === '') given.add((id = derivedRuleId(r, given)));
    return { id, index, source, minSeverity, pattern, code: text(r.code), steps, regex, minRank };
  });
}

function compileStep(raw: unknown, f: string, source: string): Step {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(f, 'must be an object');
  const r = raw as Record<string, unknown>;
  const mode = text(r.mode) || 'manual';
  if (!(MODES as readonly string[]).includes(mode)) throw invalid(`${f}.mode`, `must be one of ${MODES.join(', ')}`);
  const answer = text(r.answer);
  if (answer.length > 200) throw invalid(`${f}.answer`, 'must be at most 200 characters');
  if (source === 'B' && answer !== '' && !/^-?\d+$/.test(answer))
    throw invalid(`${f}.answer`, 'must be an action id (a whole number) for B errors');
  const delay = r.delay === undefined || r.delay === '' || r.delay === null ? DEFAULT_DELAY_S : Number(r.delay);
  if (!Number.isFinite(delay) || delay < 0 || delay > MAX_DELAY_S)
    throw invalid(`${f}.delay`, `must be 0 to ${MAX_DELAY_S} seconds`);
  return { mode: mode as Mode, answer, delay, inputs: stepInputs(r.inputs, `${f}.inputs`) };
}

/**
 * A step's input values: `{inputId: value}`, a list `[{id, value}]`, or the dialog's text `1=2.5, 3=abc`. Values are
 * text (interface B sends every input value as a string); numbers are taken as their text.
 */
export function stepInputs(value: unknown, f: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === undefined || value === null || value === '') return out;
  let pairs: [unknown, unknown][];
  if (typeof value === 'string') {
    pairs = value
      .split(/[,;\n]/)
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .map((p) => {
        const eq = p.indexOf('=');
        if (eq < 0) throw invalid(f, `must be written id=value, separated by commas (got "${p.slice(0, 40)}")`);
        return [p.slice(0, eq).trim(), p.slice(eq + 1).trim()];
      });
  } else if (Array.isArray(value)) {
    pairs = value.map((item: unknown, i) => {
      if (!item || typeof item !== 'object') throw invalid(`${f}[${i}]`, 'must be an object {id, value}');
      const o = item as Record<string, unknown>;
      return [o.id, o.value];
    });
  } else if (typeof value === 'object') pairs = Object.entries(value as Record<string, unknown>);
  else throw invalid(f, 'must be an object {inputId: value}, a list of {id, value}, or text id=value, …');
  if (pairs.length > MAX_STEP_INPUTS) throw invalid(f, `must give at most ${MAX_STEP_INPUTS} inputs`);
  for (const [id, v] of pairs) {
    const key = typeof id === 'number' ? String(id) : typeof id === 'string' ? id.trim() : '';
    if (!/^-?\d{1,10}$/.test(key) || !Number.isSafeInteger(Number(key)))
      throw invalid(`${f}.${String(id)}`, 'is not an input id (a whole number)');
    if (typeof v !== 'string' && typeof v !== 'number') throw invalid(`${f}.${key}`, 'must be a value (text or number)');
    const text = String(v);
    if (text.length > MAX_INPUT_VALUE) throw invalid(`${f}.${key}`, `must be at most ${MAX_INPUT_VALUE} characters`);
    out[String(Number(key))] = text;
  }
  return out;
}

/** The step of `rule` for the `occurrence`-th matching error (0-based): the last step answers every later one. */
export function stepAt(rule: Rule, occurrence: number): { step: Step; number: number } {
  const i = Math.min(Math.max(0, Math.floor(occurrence)), rule.steps.length - 1);
  return { step: rule.steps[i], number: i + 1 };
}

/**
 * The key a rule's ladder counts are kept under: its id and what it matches, never its position (a rule added or
 * removed above it keeps its counts); a count is dropped when a redeploy changed what the rule matches.
 */
export function ruleSignature(rule: Rule): string {
  return JSON.stringify([rule.id, rule.source, rule.minSeverity, rule.pattern, rule.code]);
}

/** The key 0.3 kept a rule's counts under (its position first): counts saved by 0.3 are taken over once. */
export function legacyRuleSignature(rule: Rule & { index: number }): string {
  return JSON.stringify([rule.index, rule.source, rule.minSeverity, rule.pattern, rule.code]);
}

/**
 * A rule's pattern compiled by RE2JS (linear-time matching: no pattern can block the event loop). Patterns RE2
 * cannot run in linear time (backreferences, lookahead/lookbehind), cannot parse, or that compile to more than
 * MAX_PROGRAM_SIZE instructions are refused at deploy, naming the field and the reason. JS-only spellings (`\/`, `(?<name>…)`, `\u0041`) are translated first.
 */
export function compilePattern(pattern: string, field = 'pattern'): RE2JS {
  if (pattern.length > MAX_PATTERN_LENGTH) throw invalid(field, `must be at most ${MAX_PATTERN_LENGTH} characters`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    const parsed = (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, '');
    const reason = /\(\?<?[=!]/.test(pattern) ? `lookahead and lookbehind are not supported (${parsed})` : parsed;
    throw invalid(
      field,
      `is not a regular expression that can be matched in linear time (RE2 syntax: no backreferences or lookaround): ${reason}`,
    );
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw invalid(
      field,
      `is too costly to match: it compiles to ${size} instructions, at most ${MAX_PROGRAM_SIZE} (large counted repeats ` +
        'such as {1000} make it so: write a shorter repeat, or + or *)',
    );
  }
  return compiled;
}

/** The text a pattern sees: the title and the message, cut at MAX_MATCHED_TEXT characters. */
export function matchedText(record: Record<string, unknown>): string {
  const title = typeof record.title === 'string' ? record.title : '';
  const message = typeof record.message === 'string' ? record.message : '';
  return `${title.slice(0, MAX_MATCHED_TEXT)}\n${message.slice(0, MAX_MATCHED_TEXT)}`.slice(0, MAX_MATCHED_TEXT);
}

/** The code an error record carries, as text (A history records have `code`; B records may have `code` or `errorCode`). */
export function errorCode(record: Record<string, unknown>): string | undefined {
  const code = record.code ?? record.errorCode;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

export function ruleMatches(rule: CompiledRule, source: ErrorSource, record: Record<string, unknown>): boolean {
  if (rule.source !== 'any' && rule.source !== source) return false;
  if (rule.minRank !== undefined) {
    const rank = severityRank(record.severity);
    if (rank !== undefined && rank < rule.minRank) return false;
  }
  if (rule.code !== '' && errorCode(record) !== rule.code) return false;
  if (rule.regex && !rule.regex.test(matchedText(record))) return false;
  return true;
}

/** The first rule that matches, or undefined (the error is only notified). */
export function matchRule(rules: CompiledRule[], source: ErrorSource, record: Record<string, unknown>): CompiledRule | undefined {
  return rules.find((r) => ruleMatches(r, source, record));
}
