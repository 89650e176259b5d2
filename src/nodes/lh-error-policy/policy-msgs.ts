/**
 * What the error policy puts on msgs and takes from its book, as pure functions of a decision or a pending default:
 * `msg.policy`, the audit msg of a default sent, a person's run-scoped answer as a default, and the decision an error
 * raised again keeps while its default is pending.
 */
import { answerAuditMsg } from '../answering/answer-audit';
import type { AnswerOutcome } from '../answering/answer-error';
import type { RunRule } from '../runs/run-scope';
import type { NodeMessage } from '../shared/node-red';
import { answerLabel, type Decision, stepAnswer } from './decision';
import type { PendingDefault } from './pending-defaults';
import { type CompiledRule, matchRule } from './rules';

/** The msg of a default sent, for output 2 (answered) or 3 (refused, failed): what the audit trail and flows read. */
export function defaultAuditMsg(p: PendingDefault, outcome: AnswerOutcome, by: string): NodeMessage {
  return answerAuditMsg({
    source: p.source,
    errorKey: p.key,
    response: p.answer,
    outcome,
    error: p.record,
    details: {
      label: answerLabel(p.source, p.record, p.answer),
      by,
      rule: p.rule >= 0 ? p.rule : null,
      ...(p.ruleId ? { ruleId: p.ruleId } : {}),
      step: p.step ?? 1,
      ...(p.inputs && Object.keys(p.inputs).length > 0 ? { inputs: p.inputs } : {}),
      ...(p.items ? { items: p.items } : {}),
      ...(p.runRule
        ? { runRule: { by: p.runRule.by, at: new Date(p.runRule.at).toISOString(), chosenOn: p.runRule.errorKey } }
        : {}),
    },
  });
}

/** The decision of a run-scoped rule a person chose on the answer page: answer at once, the same way. */
export function runRuleDecision(
  r: RunRule,
  now: number,
): {
  p: Omit<PendingDefault, 'key' | 'record' | 'source' | 'instrument'>;
  policy: Record<string, unknown>;
} {
  return {
    p: {
      answer: r.answer,
      deadline: now,
      rule: -1,
      ...(r.inputs ? { inputs: r.inputs } : {}),
      ...(r.items ? { items: r.items } : {}),
      runRule: { by: r.by, at: r.at, errorKey: r.errorKey },
    },
    policy: {
      mode: 'walk-away',
      rule: null,
      runRule: { by: r.by, at: new Date(r.at).toISOString(), chosenOn: r.errorKey },
      answer: r.answer,
    },
  };
}

/**
 * The decision already taken for an error raised again while its default is pending (the same step, deadline and
 * answer). The rule it was decided by is known by its id (a rule added above since has moved it); saved before ids:
 * by position.
 */
export function heldDecision(p: PendingDefault, rules: readonly CompiledRule[]): Decision {
  const rule = p.ruleId !== undefined ? rules.find((r) => r.id === p.ruleId) : rules[p.rule];
  if (!rule) {
    // a run-scoped rule's answer (a default whose rule a redeploy removed was cancelled at deploy: see staleDefault)
    const steps = [{ mode: 'semi-automatic' as const, answer: p.answer, delay: 0, inputs: p.inputs ?? {} }];
    const kept = { id: p.ruleId ?? '', index: p.rule, source: p.source, minSeverity: '', pattern: '', code: '', steps };
    return {
      kind: 'schedule',
      rule: kept,
      rung: { rule: kept, step: steps[0], number: 1, of: 1 },
      answer: p.answer,
      deadline: p.deadline,
      deadlineBy: p.deadlineBy ?? 'rule',
    };
  }
  const number = Math.min(p.step ?? 1, rule.steps.length);
  const rung = { rule, step: rule.steps[number - 1], number, of: rule.steps.length };
  return { kind: 'schedule', rule, rung, answer: p.answer, deadline: p.deadline, deadlineBy: p.deadlineBy ?? 'rule' };
}

/** `msg.policy` of a decision: mode, rule (1-based) and its id, the ladder's step and the scope it counts in. */
export function policyOf(decision: Decision, where: { kind: string; key?: string }): Record<string, unknown> {
  const rung = decision.rung;
  return {
    mode: rung?.step.mode ?? 'manual',
    rule: decision.rule && decision.rule.index >= 0 ? decision.rule.index + 1 : null,
    ...(decision.rule && decision.rule.id !== '' ? { ruleId: decision.rule.id } : {}),
    ...(rung
      ? { step: rung.number, steps: rung.of, scope: where.kind, ...(where.kind === 'run' ? { run: where.key } : {}) }
      : {}),
  };
}

/** The pending default of a scheduled or immediate decision. */
export function pendingOf(
  decision: Extract<Decision, { kind: 'schedule' | 'answer-now' }>,
  found: { key: string; source: PendingDefault['source']; record: Record<string, unknown> },
  instrument: string,
  now: number,
): PendingDefault {
  const inputs = decision.rung.step.inputs;
  return {
    key: found.key,
    source: found.source,
    answer: decision.answer,
    ...(decision.kind === 'schedule' ? { deadline: decision.deadline, deadlineBy: decision.deadlineBy } : { deadline: now }),
    decidedAt: now,
    rule: decision.rule.index,
    ruleId: decision.rule.id,
    step: decision.rung.number,
    ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
    instrument,
    record: found.record,
  };
}

/** The same input values (by input id), whatever their order. */
function sameInputs(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
}

/**
 * Why a pending default no longer stands under the rules deployed now (undefined: it stands). It was decided by a
 * rule (known by its id) that a redeploy removed, or that no longer matches the error, or whose step for it is manual
 * now or answers otherwise (another response or action, other input values). A person's run-scoped answer, and a
 * default saved before rules had ids, stand as decided. A change of mode between semi-automatic and walk-away, or of
 * delay, keeps the default (its deadline stays).
 */
export function staleDefault(p: PendingDefault, rules: CompiledRule[]): string | undefined {
  if (p.runRule || p.ruleId === undefined || p.ruleId === '') return undefined;
  const rule = rules.find((r) => r.id === p.ruleId);
  if (!rule) return `rule ${p.ruleId} was removed`;
  if (!matchRule([rule], p.source, p.record)) return `rule ${p.ruleId} no longer matches the error`;
  const number = Math.min(Math.max(1, p.step ?? 1), rule.steps.length);
  const step = rule.steps[number - 1];
  const where = rule.steps.length > 1 ? `step ${number} of rule ${p.ruleId}` : `rule ${p.ruleId}`;
  if (step.mode === 'manual') return `${where} is manual now`;
  const answer = stepAnswer(step, p.source, p.record);
  const same = answer !== undefined && (p.source === 'B' ? Number(answer) === Number(p.answer) : answer === p.answer);
  if (!same) return `${where} answers otherwise now`;
  if (!sameInputs(step.inputs, p.inputs)) return `${where} gives other input values now`;
  return undefined;
}
