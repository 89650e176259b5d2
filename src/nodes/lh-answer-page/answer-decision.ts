/**
 * The answer page's decisions as pure functions (issue 30 point 3, beside the policy's `decision.ts`): what a posted
 * answer leads to before anything is sent (nothing, or which request), and how an outcome is shown (the page's kind
 * and reason, the node's status, the HTTP status). The node wires them to the instrument, the page and the status.
 */
import { LhError } from '../../client';
import type { AnswerOutcome } from '../answering/answer-error';
import type { OutcomeKind } from './page-html';

type ErrorRecord = Record<string, unknown>;

const OP = 'answer-page';

export const NO_CONFIRMATION = 'no confirmation received: it may have been applied; check the instrument before answering again';

/** What the form asked for, and what the page found when it checked the instrument's list afresh. */
export interface PostedAnswer {
  source: 'A' | 'B';
  /** the error id the link names */
  key: string;
  /** the response (A) or action id (B) chosen on the form */
  chosen?: string | null;
  /** the error is answered already (by this Node-RED or one sharing its ledger) */
  already: boolean;
  /** the record listed under the id now; undefined when it is no longer pending */
  record?: ErrorRecord;
  /** set when the record listed now is another error than the link was made for: what is listed instead */
  changedTo?: string;
  /** an A item's answer that the error does not offer (what is wrong with it), checked only for A */
  itemProblem?: string;
  /** the form's choice cannot be read against what the error offers (its signed state does not hold, a bad position) */
  choiceProblem?: string;
}

/** Either an outcome reached without sending anything, or the request to send. */
export type AnswerPlan =
  | { send: false; outcome: AnswerOutcome }
  | { send: 'A'; record: ErrorRecord; response: string }
  | { send: 'B'; record: ErrorRecord; actionId: number };

function refused(message: string, field?: string): AnswerOutcome {
  return {
    outcome: 'refused',
    message,
    error: new LhError(message, { kind: 'validation', operation: OP, ...(field ? { field } : {}) }),
  };
}

/** The checks before an answer goes out, in the order a person reads them on the page: first failing one wins. */
export function planAnswer(p: PostedAnswer): AnswerPlan {
  if (p.already) return { send: false, outcome: { outcome: 'already-answered', message: 'already answered' } };
  if (!p.record) return { send: false, outcome: { outcome: 'not-pending', message: `error ${p.key} is not pending` } };
  if (p.changedTo !== undefined) {
    const message = `the instrument now lists another error under ${p.key}: ${p.changedTo}; nothing was sent`;
    return {
      send: false,
      outcome: {
        outcome: 'changed',
        message,
        error: new LhError(message, { kind: 'changed', operation: OP }),
        current: p.record,
      },
    };
  }
  if (p.choiceProblem !== undefined) return { send: false, outcome: refused(p.choiceProblem, 'choice') };
  const chosen = p.chosen;
  if (chosen === undefined || chosen === null || chosen === '') return { send: false, outcome: refused('no answer was chosen') };
  if (p.source === 'A') {
    if (p.itemProblem !== undefined) return { send: false, outcome: refused(p.itemProblem, 'errorDataResponses') };
    return { send: 'A', record: p.record, response: chosen };
  }
  const actionId = Number(chosen);
  if (!Number.isInteger(actionId)) return { send: false, outcome: refused('the action is not a number') };
  return { send: 'B', record: p.record, actionId };
}

/** A timeout, a reset or a 5xx: the instrument may have applied the answer without confirming it. */
export function mayHaveApplied(err: LhError): boolean {
  return err.kind === 'network' || err.kind === 'timeout' || (err.statusCode ?? 0) >= 500;
}

/** How the page and the node's status show an outcome (everything but the answered / already-answered details). */
export interface ShownOutcome {
  /** the outcome as reported (a send that may have been applied says so in its message) */
  outcome: AnswerOutcome;
  /** the page's kind: the outcome's, or `invalid` for an input the page refused before sending */
  kind: OutcomeKind;
  reason?: string;
  unconfirmed?: true;
  /** the node's status after it: ok (answered), warn (not answered), or unchanged */
  status?: 'answered' | 'notAnswered';
  /** the HTTP status of the page */
  httpStatus: 200 | 502;
}

/** `"Arm collision" (Fatal)` */
export function errorLabel(record: ErrorRecord): string {
  const title = typeof record.title === 'string' ? record.title : 'an error without title';
  const severity = typeof record.severity === 'string' ? ` (${record.severity})` : '';
  return `"${title}"${severity}`;
}

export function showOutcome(given: AnswerOutcome): ShownOutcome {
  const httpStatus =
    given.outcome === 'answered' || given.outcome === 'already-answered' || given.outcome === 'not-pending' ? 200 : 502;
  const shown = (more: Partial<ShownOutcome>, outcome = given): ShownOutcome => ({
    outcome,
    kind: given.outcome,
    httpStatus,
    ...more,
  });
  switch (given.outcome) {
    case 'answered':
      return shown({ status: 'answered' });
    case 'already-answered':
    case 'not-pending':
      return shown({});
    case 'changed':
      return shown({ reason: errorLabel(given.current), status: 'notAnswered' });
    case 'ambiguous':
      return shown({ reason: given.listed.map(errorLabel).join('; '), status: 'notAnswered' });
    case 'failed':
      if (mayHaveApplied(given.error)) {
        const outcome = { ...given, message: `${NO_CONFIRMATION} (${given.message})` };
        return shown({ reason: outcome.message, unconfirmed: true, status: 'notAnswered' }, outcome);
      }
      return shown({ reason: given.message, status: 'notAnswered' });
    case 'refused':
      // an input or an item's answer the page refused before sending: said plainly, nothing went out
      if (given.error.kind === 'validation' && /^(inputs|errorDataResponses)\b/.test(given.error.field ?? ''))
        return shown({ kind: 'invalid', reason: given.message, status: 'notAnswered' });
      return shown({ reason: given.message, status: 'notAnswered' });
  }
}
