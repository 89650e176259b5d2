import type { NodeMessage } from '../shared/node-red';
import { oneLine } from '../shared/one-line';
import type { ErrorSource } from '../shared/poll-messages';
import { redact, redactDeep } from '../shared/redaction';
import type { AnswerOutcome } from './answer-error';

/** What an answering node says of one answer on its audit output, besides the common frame. */
export interface AnswerAudit {
  source: ErrorSource;
  errorKey: string;
  response: string | null;
  outcome: AnswerOutcome;
  /** the error as it was answered (or shown), null when not known */
  error: unknown;
  /** the node's own fields (who, rule, step, inputs, …), in msg.payload */
  details: Record<string, unknown>;
}

/**
 * The audit msg of lh-answer-page and lh-error-policy: `topic` "outcome: key", `payload` with source, key, response,
 * the node's details, time and outcome (and the reason when not answered), and the raised msg's fields (`source`,
 * `errorId`/`uuid`, `error`) so the msg can be wired where a raised msg goes. The instrument's words (the error, a
 * refusal's reason) pass the redaction step: an instrument that echoes a password or a token sends it nowhere.
 */
export function answerAuditMsg(a: AnswerAudit, now: Date = new Date()): NodeMessage {
  const { outcome } = a.outcome;
  return {
    // the key as the instrument gave it in msg.payload; the topic one line (an id with a line break or an escape)
    topic: oneLine(`${outcome}: ${a.errorKey}`),
    payload: {
      source: a.source,
      errorKey: a.errorKey,
      // an instrument may echo a secret into a response name: the msg says the answer redacted, as it says the error
      response: a.response === null ? null : redact(a.response),
      ...redactDeep(a.details),
      at: now.toISOString(),
      outcome,
      ...(a.outcome.outcome === 'answered' ? {} : { reason: redact(a.outcome.message) }),
    },
    outcome,
    source: a.source,
    ...(a.source === 'A' ? { errorId: a.errorKey } : { uuid: a.errorKey }),
    error: redactDeep(a.error),
  };
}
