/** The policy's ordered rules: checked once when the node starts, matched per error (first match wins). */
import { LhError } from '../../client';
import { severityRank } from '../lh-error-poll/severity';

export const MODES = ['manual', 'semi-automatic', 'walk-away'] as const;
export type Mode = (typeof MODES)[number];
export type RuleSource = 'any' | 'A' | 'B';

export interface Rule {
  source: RuleSource;
  /** '' = any; else Warning, Error or Fatal (an unknown severity of the instrument always matches) */
  minSeverity: string;
  /** a regular expression (case-insensitive) over the title and the message; '' = any */
  pattern: string;
  /** the error's code as text; '' = any */
  code: string;
  mode: Mode;
  /** A: the response; B: the action id; '' on B = the error's own default action */
  answer: string;
  /** semi-automatic: seconds a person has before the default goes out */
  delay: number;
}

export interface CompiledRule extends Rule {
  index: number;
  regex?: RegExp;
  minRank?: number;
}

export const DEFAULT_DELAY_S = 120;
const MAX_DELAY_S = 7 * 24 * 3600;
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
  return value.map((raw: unknown, index) => {
    const f = `rules[${index}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(f, 'must be an object');
    const r = raw as Record<string, unknown>;
    const source = text(r.source) || 'any';
    if (source !== 'any' && source !== 'A' && source !== 'B') throw invalid(`${f}.source`, 'must be any, A or B');
    const mode = text(r.mode) || 'manual';
    if (!(MODES as readonly string[]).includes(mode)) throw invalid(`${f}.mode`, `must be one of ${MODES.join(', ')}`);
    const minSeverity = text(r.minSeverity);
    const minRank = minSeverity === '' ? undefined : severityRank(minSeverity);
    if (minSeverity !== '' && minRank === undefined) throw invalid(`${f}.minSeverity`, 'must be empty, Warning, Error or Fatal');
    const pattern = text(r.pattern);
    let regex: RegExp | undefined;
    if (pattern !== '') {
      if (pattern.length > 500) throw invalid(`${f}.pattern`, 'must be at most 500 characters');
      try {
        regex = new RegExp(pattern, 'i');
      } catch (err) {
        throw invalid(`${f}.pattern`, `is not a regular expression (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    const answer = text(r.answer);
    if (answer.length > 200) throw invalid(`${f}.answer`, 'must be at most 200 characters');
    if (source === 'B' && answer !== '' && !/^-?\d+$/.test(answer)) throw invalid(`${f}.answer`, 'must be an action id (a whole number) for B errors');
    const delayRaw = r.delay === undefined || r.delay === '' ? DEFAULT_DELAY_S : Number(r.delay);
    if (!Number.isFinite(delayRaw) || delayRaw < 0 || delayRaw > MAX_DELAY_S) throw invalid(`${f}.delay`, `must be 0 to ${MAX_DELAY_S} seconds`);
    return { index, source, minSeverity, pattern, code: text(r.code), mode: mode as Mode, answer, delay: delayRaw, regex, minRank };
  });
}

/** The code an error record carries, as text (A history records have `code`; B records may have `code` or `errorCode`). */
export function errorCode(record: Record<string, unknown>): string | undefined {
  const code = record.code ?? record.errorCode;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

export function ruleMatches(rule: CompiledRule, source: 'A' | 'B', record: Record<string, unknown>): boolean {
  if (rule.source !== 'any' && rule.source !== source) return false;
  if (rule.minRank !== undefined) {
    const rank = severityRank(record.severity);
    if (rank !== undefined && rank < rule.minRank) return false;
  }
  if (rule.code !== '' && errorCode(record) !== rule.code) return false;
  if (rule.regex) {
    const title = typeof record.title === 'string' ? record.title : '';
    const message = typeof record.message === 'string' ? record.message : '';
    if (!rule.regex.test(`${title}\n${message}`)) return false;
  }
  return true;
}

/** The first rule that matches, or undefined (the error is only notified). */
export function matchRule(rules: CompiledRule[], source: 'A' | 'B', record: Record<string, unknown>): CompiledRule | undefined {
  return rules.find((r) => ruleMatches(r, source, record));
}
