/** What the policy does with a raised error: pure, from the matched rule and the record. */
import { defaultActionOf } from '../answering/answer-error';
import { describeActions, offeredActions } from '../shared/error-records';
import { CompiledRule } from './rules';

export type Decision =
  | { kind: 'notify'; rule?: CompiledRule }
  | { kind: 'schedule'; rule: CompiledRule; answer: string; deadline: number }
  | { kind: 'answer-now'; rule: CompiledRule; answer: string }
  | { kind: 'escalate'; rule: CompiledRule; reason: string };

/** The answer a rule gives: its own, else the B error's default action; A errors have no default of their own. */
export function ruleAnswer(rule: CompiledRule, source: 'A' | 'B', record: Record<string, unknown>): string | undefined {
  if (rule.answer !== '') return rule.answer;
  if (source === 'B') {
    const id = defaultActionOf(record);
    return id === undefined ? undefined : String(id);
  }
  return undefined;
}

export function decide(rule: CompiledRule | undefined, source: 'A' | 'B', record: Record<string, unknown>, now: number): Decision {
  if (!rule || rule.mode === 'manual') return { kind: 'notify', rule };
  const answer = ruleAnswer(rule, source, record);
  if (answer === undefined) {
    const reason =
      source === 'A'
        ? `rule ${rule.index + 1} (${rule.mode}) names no response, and A errors have no default: a person must answer`
        : `rule ${rule.index + 1} (${rule.mode}) names no action and the error has no default action: a person must answer`;
    return { kind: 'escalate', rule, reason };
  }
  if (rule.mode === 'walk-away') return { kind: 'answer-now', rule, answer };
  return { kind: 'schedule', rule, answer, deadline: now + rule.delay * 1000 };
}

/** "Retry" (A) or "1 Retry (default)" (B) */
export function answerLabel(source: 'A' | 'B', record: Record<string, unknown>, answer: string): string {
  if (source === 'A') return answer;
  const action = offeredActions(record)?.find((a) => String(a.id) === answer);
  return action ? describeActions([action]) : `action ${answer}`;
}
