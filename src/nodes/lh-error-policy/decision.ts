/** What the policy does with a raised error: pure, from the matched rule, the step of its ladder and the record. */
import { instrumentDate, LhError } from '../../client';
import { checkInputs, declaredInputs, givenInputs } from '../answering/action-inputs';
import { defaultActionOf } from '../answering/answer-error';
import { describeActions, offeredActions, responseNames } from '../shared/error-records';
import type { ErrorSource } from '../shared/poll-messages';
import { type CompiledRule, type Step, stepAt } from './rules';

/** The step of a rule's ladder an error gets. */
export interface Rung {
  rule: CompiledRule;
  step: Step;
  /** 1-based */
  number: number;
  /** steps in the ladder */
  of: number;
}

/** Which deadline applies to a semi-automatic default: the rule's delay, or the B error's own timeoutSeconds. */
export type DeadlineBy = 'rule' | 'instrument';

export type Decision =
  | { kind: 'notify'; rule?: CompiledRule; rung?: Rung }
  | { kind: 'schedule'; rule: CompiledRule; rung: Rung; answer: string; deadline: number; deadlineBy: DeadlineBy }
  | { kind: 'answer-now'; rule: CompiledRule; rung: Rung; answer: string }
  | { kind: 'escalate'; rule: CompiledRule; rung: Rung; reason: string };

/** How long before the instrument's own timeout the policy answers (the instrument would act itself at its timeout). */
export const INSTRUMENT_MARGIN_MS = 1000;

/** The answer a step gives: its own, else the B error's default action; A errors have no default of their own. */
export function stepAnswer(step: Step, source: ErrorSource, record: Record<string, unknown>): string | undefined {
  if (step.answer !== '') return step.answer;
  if (source === 'B') {
    const id = defaultActionOf(record);
    return id === undefined ? undefined : String(id);
  }
  return undefined;
}

/**
 * When the instrument acts on its own: a B error's `timeoutSeconds` after it was raised (its `date`, UTC when it names
 * no zone, when that is not in
 * the future and not older than the timeout; else when the policy saw it), less a margin. Undefined without one.
 */
export function instrumentDeadline(record: Record<string, unknown>, now: number): number | undefined {
  const t = record.timeoutSeconds;
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return undefined;
  const ms = t * 1000;
  // a date without a zone is the instrument's UTC (as everywhere in the package), whatever this Node-RED's zone
  const iso = instrumentDate(record.date);
  const raised = iso === null ? NaN : Date.parse(iso);
  const base = Number.isFinite(raised) && raised <= now && now - raised < ms ? raised : now;
  return Math.max(now, base + ms - Math.min(INSTRUMENT_MARGIN_MS, ms / 10));
}

function rungLabel(r: Rung): string {
  return r.of > 1
    ? `rule ${r.rule.index + 1}, step ${r.number} of ${r.of} (${r.step.mode})`
    : `rule ${r.rule.index + 1} (${r.step.mode})`;
}

/** Why a B answer cannot go out with the step's inputs (a required input without a value, a value out of range). */
function inputProblem(rung: Rung, record: Record<string, unknown>, answer: string): string | undefined {
  const actionId = Number(answer);
  const field = `rules[${rung.rule.index}].steps[${rung.number - 1}].inputs`;
  try {
    checkInputs(
      {
        declared: offeredActions(record)?.length ? declaredInputs(record, actionId) : undefined,
        given: givenInputs(rung.step.inputs, field, 'error-policy'),
        actionId,
        useDefaults: true,
        field,
      },
      'error-policy',
    );
    return undefined;
  } catch (err) {
    return err instanceof LhError ? err.message : String(err);
  }
}

/**
 * Why the answer is not one the error offers (the responses of an A error and of each of its errorData items, the
 * actions of a B error), when its record lists what it offers: the answer would be refused before anything is sent.
 */
export function offerProblem(source: ErrorSource, record: Record<string, unknown>, answer: string): string | undefined {
  if (source === 'B') {
    const actions = offeredActions(record);
    // by number, as answerB sends it: a rule's "01" is action 1
    if (!actions?.length || actions.some((a) => a.id === Number(answer))) return undefined;
    return `which the error does not offer (it offers ${describeActions(actions)})`;
  }
  const offered = responseNames(record.errorResponses);
  if (offered.length > 0 && !offered.includes(answer)) return `which the error does not offer (it offers ${offered.join(', ')})`;
  const items: unknown[] = Array.isArray(record.errorData) ? (record.errorData as unknown[]) : [];
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const own = responseNames((item as Record<string, unknown>).errorResponses);
    const id = String((item as Record<string, unknown>).id);
    if (own.length > 0 && !own.includes(answer))
      return `which item ${id} of the error does not offer (it offers ${own.join(', ')})`;
  }
  return undefined;
}

/**
 * The decision for an error that matched `rule` as its `occurrence`-th (0-based) in the current run. A ladder's manual
 * step after the first escalates to a person (output 3); a rule with only a manual step notifies (output 1).
 */
export function decide(
  rule: CompiledRule | undefined,
  source: ErrorSource,
  record: Record<string, unknown>,
  now: number,
  occurrence = 0,
): Decision {
  if (!rule) return { kind: 'notify' };
  const { step, number } = stepAt(rule, occurrence);
  const rung: Rung = { rule, step, number, of: rule.steps.length };
  if (step.mode === 'manual') {
    if (rule.steps.length === 1) return { kind: 'notify', rule, rung };
    return { kind: 'escalate', rule, rung, reason: `${rungLabel(rung)}: a person must answer` };
  }
  const answer = stepAnswer(step, source, record);
  if (answer === undefined) {
    const reason =
      source === 'A'
        ? `${rungLabel(rung)} names no response, and A errors have no default: a person must answer`
        : `${rungLabel(rung)} names no action and the error has no default action: a person must answer`;
    return { kind: 'escalate', rule, rung, reason };
  }
  if (source === 'B') {
    const problem = inputProblem(rung, record, answer);
    if (problem) return { kind: 'escalate', rule, rung, reason: `${rungLabel(rung)}: ${problem}; a person must answer` };
  }
  if (step.mode === 'walk-away') return { kind: 'answer-now', rule, rung, answer };
  // a default the error does not offer would be refused when it falls due: a person is told now, with no deadline
  const unoffered = offerProblem(source, record, answer);
  if (unoffered)
    return { kind: 'escalate', rule, rung, reason: `${rungLabel(rung)} answers ${answer}, ${unoffered}: a person must answer` };
  const byRule = now + step.delay * 1000;
  const byInstrument = source === 'B' ? instrumentDeadline(record, now) : undefined;
  return byInstrument !== undefined && byInstrument < byRule
    ? { kind: 'schedule', rule, rung, answer, deadline: byInstrument, deadlineBy: 'instrument' }
    : { kind: 'schedule', rule, rung, answer, deadline: byRule, deadlineBy: 'rule' };
}

/** "Retry" (A) or "1 Retry (default)" (B) */
export function answerLabel(source: ErrorSource, record: Record<string, unknown>, answer: string): string {
  if (source === 'A') return answer;
  const action = offeredActions(record)?.find((a) => String(a.id) === answer);
  return action ? describeActions([action]) : `action ${answer}`;
}
