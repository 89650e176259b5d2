/**
 * One answer to one error, the way the answer page and the error policy give it: through the client code of
 * lh-answer-error (answerBody) and lh-submit-recovery (recoveryBody), and the client's answer ledger (at most one
 * answer per error and instrument from this Node-RED, whoever asks first). The outcome says what happened, never
 * success for an answer not made.
 */
import { EventEmitter } from 'events';

import { currentActor, withActor } from '../../audit';
import {
  type AnswerOptions,
  type AnswerRecord,
  asLhError,
  type ErrorIdentity,
  type ErrorRecovery,
  identityOf,
  type InstrumentError,
  LhError,
  type LiquidHandlerClient,
  type PendingError,
  type RecoveryKind,
  type RuntimeErrorAnswer,
  type SharedAnswerClaim,
} from '../../client';
import { FencedError } from '../../coordination/leases';
import { homeOf } from '../../instrument';
import { answeredBy, labListened, publishLab } from '../../observe/lab-events';
import { type OfferedAction, offeredActions } from '../shared/error-records';
import { redactErr } from '../shared/redaction';
import { answerBody } from './answer-body';
import { isAutomatic } from './automatic';
import { checkOffered, recoveryBody } from './recovery-body';

/** An answer this Node-RED gave (the ledger's record). */
export type GivenAnswer = AnswerRecord;

export type AnswerOutcome =
  | { outcome: 'answered'; answer: GivenAnswer; sent: unknown }
  | { outcome: 'already-answered'; previous?: GivenAnswer; message: string; inFlight?: boolean; error?: LhError }
  | { outcome: 'not-pending'; message: string; error?: LhError }
  | { outcome: 'refused'; message: string; error: LhError }
  /** the instrument lists another error under the id now: nothing was sent */
  | { outcome: 'changed'; message: string; error: LhError; current: Record<string, unknown> }
  /**
   * the instrument lists several different errors under the id: an answer cannot say which one it is for, so none is
   * sent (a policy escalates it to a person; the page and lh-answer-error refuse with LH_AMBIGUOUS)
   */
  | { outcome: 'ambiguous'; message: string; error: LhError; listed: Record<string, unknown>[] }
  /** `fenced`: an automatic answer refused because another Node-RED holds the instrument now (nothing was sent) */
  | { outcome: 'failed'; message: string; error: LhError; fenced?: boolean };

/** Tells in-process listeners (an error policy's pending defaults) that an error was answered: `(instrument, errorKey)`. */
export const answerEvents = new EventEmitter();
answerEvents.setMaxListeners(0);

/** The client's instrument key, `baseUrl|instrumentUrl`: the lh-server node's instrumentKey (its home's). */
export function instrumentKeyOf(client: LiquidHandlerClient): string {
  return `${client.baseUrl}|${client.instrumentUrl ?? ''}`;
}

/**
 * The answer this Node-RED gave to the error (outcome 'answered'), or is giving ('in-flight'); with `identity`,
 * none when that answer went to another error the instrument listed under the same id.
 */
export function lookupAnswer(client: LiquidHandlerClient, errorKey: string, identity?: ErrorIdentity): GivenAnswer | undefined {
  return client.answers.lookup(errorKey, identity);
}

function isRecord(value: unknown): value is AnswerRecord {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as AnswerRecord).errorKey === 'string' &&
    typeof (value as AnswerRecord).at === 'number'
  );
}

/** What a failed answer means for the person or the rule that gave it. */
export function answerOutcomeOf(err: unknown, operation: string): AnswerOutcome {
  const e = redactErr(asLhError(err, operation));
  if (e.kind === 'ambiguous') {
    const listed = Array.isArray(e.body)
      ? e.body.filter((r): r is Record<string, unknown> => !!r && typeof r === 'object' && !Array.isArray(r))
      : [];
    return { outcome: 'ambiguous', message: e.message, error: e, listed };
  }
  if (e.kind === 'changed') {
    const current = e.body && typeof e.body === 'object' ? (e.body as Record<string, unknown>) : {};
    return { outcome: 'changed', message: e.message, error: e, current };
  }
  // a 409 is one only when the client found the error handled (a 409 for another reason is a refusal)
  if (e.kind === 'already-answered' || e.code === 'LH_ALREADY_ANSWERED') {
    const previous = isRecord(e.body) ? e.body : undefined;
    return { outcome: 'already-answered', message: e.message, previous, inFlight: previous?.outcome === 'in-flight', error: e };
  }
  // a 404 the client found refused (the instrument still lists the error) is a refusal: kind 'instrument'
  if (e.statusCode === 404 && e.kind !== 'instrument') return { outcome: 'not-pending', message: e.message, error: e };
  if (e.kind === 'network' || e.kind === 'timeout' || e.kind === 'tls' || e.kind === 'auth' || (e.statusCode ?? 0) >= 500)
    return { outcome: 'failed', message: e.message, error: e };
  return { outcome: 'refused', message: e.message, error: e };
}

/** What an answer claims in the ledger shared by several Node-REDs (coordination), before anything is sent. */
interface ClaimOf {
  source: 'A' | 'B';
  response: string;
  options: AnswerOptions;
}

async function settle(
  client: LiquidHandlerClient,
  key: string,
  operation: string,
  send: () => Promise<unknown>,
  claimOf?: ClaimOf,
): Promise<AnswerOutcome> {
  // several Node-REDs on one instrument: the first claim in Redis answers, any other replica's answer is refused
  // before a request (a page on one replica and a policy on another never answer one error twice)
  const shared = claimOf ? homeOf(instrumentKeyOf(client)).answerClaims : undefined;
  let claim: SharedAnswerClaim | undefined;
  if (shared && claimOf) {
    try {
      claim = await shared.claim(claimOf.source, key, claimOf.response, {
        ...claimOf.options,
        ...(isAutomatic() ? { automatic: true } : {}),
      });
    } catch (err) {
      if (err instanceof FencedError) {
        const message = `${operation}: ${err.message}; nothing was sent`;
        return { outcome: 'failed', fenced: true, message, error: new LhError(message, { kind: 'busy', operation }) };
      }
      const e = redactErr(asLhError(err, operation));
      const message = `${operation}: the answer ledger shared by the Node-REDs cannot be reached (${e.message}); nothing was sent`;
      return { outcome: 'failed', message, error: new LhError(message, { kind: 'network', operation }) };
    }
    if (!claim.ok) {
      const { replica, ...previous } = claim.existing;
      const where = replica ? ` by another Node-RED (${replica})` : '';
      const message = `${operation}: error ${key} was ${previous.outcome === 'in-flight' ? 'being ' : ''}answered${where}`;
      return {
        outcome: 'already-answered',
        previous,
        message,
        inFlight: previous.outcome === 'in-flight',
        error: new LhError(message, { kind: 'already-answered', operation, body: previous }),
      };
    }
  }
  const held = claim?.ok ? claim : undefined;
  let outcome: AnswerOutcome;
  try {
    const sent = await send();
    const answer = lookupAnswer(client, key);
    if (!answer)
      throw new LhError(`${operation}: the answer ledger has no record of error ${key}`, { kind: 'response', operation });
    answerEvents.emit('answered', instrumentKeyOf(client), key);
    if (claimOf && labListened()) {
      const nodeType = currentActor()?.nodeType;
      const channel =
        isAutomatic() || nodeType === 'lh-error-policy' ? 'policy' : nodeType === 'lh-answer-page' ? 'page' : 'flow';
      const about = { instrumentKey: instrumentKeyOf(client), instrument: '' };
      publishLab({ ...about, kind: 'answered', source: claimOf.source, id: key, by: answeredBy(undefined, channel) });
    }
    outcome = { outcome: 'answered', answer, sent };
  } catch (err) {
    outcome = answerOutcomeOf(err, operation);
  }
  // the shared record follows this process's: answered, or free again for whoever answers next
  await (outcome.outcome === 'answered' ? held?.confirm() : held?.release())?.catch(() => undefined);
  return outcome;
}

/** Who answers (the page's signer or the policy's name), the meaning of the answer and the error answered. */
function answerActor(
  by: string | undefined,
  meaning: unknown,
  error: unknown,
): { signer?: string; meaning: string; why: { error: string } } {
  return { ...(by ? { signer: by } : {}), meaning: String(meaning), why: { error: String(error) } };
}

function answerOptions(
  by: string | undefined,
  expected: ErrorIdentity | undefined,
  unlisted = false,
): { by?: string; identity?: ErrorIdentity; unlisted?: boolean } {
  return { ...(by ? { by } : {}), ...(expected ? { identity: expected } : {}), ...(unlisted ? { unlisted } : {}) };
}

/** Whether an A error as lh-error-poll emitted it is a firmware error (pushed on the socket, never in the error list). */
export function isFirmwareError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Record<string, unknown>).source === 'firmware';
}

/**
 * Sends an A answer already built (lh-answer-error builds its own from the msg). `expected`: the error as the
 * person or rule saw it; when the instrument lists another error under its id now, nothing is sent.
 */
export function sendAnswerA(
  client: LiquidHandlerClient,
  body: RuntimeErrorAnswer,
  by?: string,
  expected?: ErrorIdentity,
  unlisted = false,
): Promise<AnswerOutcome> {
  const op = 'answer-error';
  return settle(
    client,
    String(body.id),
    op,
    async () => {
      // the audit record names the signer, what the answer means and the error it answers
      await withActor(answerActor(by, body.selectedResponse, body.id), () =>
        client.prep.answerRuntimeError(body, answerOptions(by, expected, unlisted)),
      );
      return body;
    },
    { source: 'A', response: String(body.selectedResponse), options: answerOptions(by, expected, unlisted) },
  );
}

/**
 * Answers an A error (a pending error as lh-error-poll emitted it) with one of its responses. `expected` defaults to
 * the identity of `error` itself: the error as it was seen.
 */
export function answerA(
  client: LiquidHandlerClient,
  error: PendingError,
  response: string,
  by?: string,
  expected: ErrorIdentity | undefined = identityOf(error),
  perItem?: Record<string, string>,
): Promise<AnswerOutcome> {
  let body: ReturnType<typeof answerBody>;
  try {
    body = answerBody(error, response, perItem);
  } catch (err) {
    return Promise.resolve(answerOutcomeOf(err, 'answer-error'));
  }
  return sendAnswerA(client, body, by, expected, isFirmwareError(error));
}

/**
 * Submits a B recovery or action already built (lh-submit-recovery builds its own from the msg); `sent` is the
 * instrument's result. A uuid given alone (no `expected`) is first spelled as the instrument lists it.
 */
export async function sendRecovery(
  client: LiquidHandlerClient,
  kind: RecoveryKind,
  body: ErrorRecovery,
  by?: string,
  expected?: ErrorIdentity,
): Promise<AnswerOutcome> {
  const op = kind === 'recovery' ? 'submit-recovery' : 'submit-action';
  const listed = expected ? undefined : await listedUnder(client, body.uuid);
  const sending = listed ? { ...body, uuid: listed.uuid } : body;
  // a uuid given alone: the error just read tells which actions it offers (a recovery solution must be one)
  try {
    checkOffered(kind, listed?.actions, sending.selectedActionId, sending.uuid, op);
  } catch (err) {
    return answerOutcomeOf(err, op);
  }
  return settle(
    client,
    sending.uuid,
    op,
    async () => {
      const identity = expected ?? listed?.identity;
      return withActor(answerActor(by, `${kind} ${sending.selectedActionId}`, sending.uuid), () =>
        client.instrument.submit(kind, sending, answerOptions(by, identity)),
      );
    },
    { source: 'B', response: String(sending.selectedActionId), options: answerOptions(by, expected) },
  );
}

/**
 * The error the instrument lists under `uuid` now, for an answer given by uuid alone: its uuid in the instrument's
 * spelling (a uuid names its error in any letter case, and the instrument matches it so: one error is one key of
 * the answer ledger, whatever the case it was typed in; not listed, or the list unread, its lower-case form, a
 * UUID's canonical one) and its identity, so the answer is kept as the answer of that very error (never of a later
 * one under the same uuid). A failed read gives no identity: the answer goes as given, by uuid.
 */
async function listedUnder(
  client: LiquidHandlerClient,
  uuid: string,
): Promise<{ uuid: string; identity?: ErrorIdentity; actions?: OfferedAction[] }> {
  const lower = typeof uuid === 'string' ? uuid.toLowerCase() : uuid;
  try {
    const found = (await client.instrument.unhandledErrors()).find(
      (e) => e && typeof e === 'object' && typeof e.uuid === 'string' && e.uuid.toLowerCase() === lower && e.handled !== true,
    );
    return found ? { uuid: found.uuid, identity: identityOf(found), actions: offeredActions(found) } : { uuid: lower };
  } catch {
    return { uuid: lower };
  }
}

/** Input values that go with a B answer: given by a rule step or the page; checked against what the action declares. */
export interface AnswerInputs {
  /** `{inputId: value}` or `[{id, value}]` */
  values?: unknown;
  /** a declared input's default stands in for a value not given (a policy step) */
  useDefaults?: boolean;
  /** what refusals name the values after (default 'inputs') */
  field?: string;
}

/**
 * Submits a B error's action (a recovery when the action says so), with the lh-server node's client key. An action
 * that declares inputs goes out only with a valid value for each required one (refused, nothing sent, otherwise).
 */
export function answerB(
  client: LiquidHandlerClient,
  error: InstrumentError,
  actionId: number,
  errorHandlingKey: string | null,
  by?: string,
  expected: ErrorIdentity | undefined = identityOf(error),
  inputs: AnswerInputs = {},
): Promise<AnswerOutcome> {
  const action = offeredActions(error)?.find((a) => a.id === actionId);
  const kind = action?.isRecovery === false ? 'action' : 'recovery';
  const op = kind === 'recovery' ? 'submit-recovery' : 'submit-action';
  let body: ReturnType<typeof recoveryBody>;
  try {
    body = recoveryBody(
      { payload: error },
      {
        kind,
        uuid: error.uuid,
        selectedActionId: actionId,
        errorHandlingKey,
        inputs: inputs.values ?? null,
        useDefaults: inputs.useDefaults,
        inputsField: inputs.field,
      },
      op,
    );
  } catch (err) {
    return Promise.resolve(answerOutcomeOf(err, op));
  }
  return sendRecovery(client, kind, body, by, expected);
}

/** What a flow's answer node does with an outcome: the instrument's result, or the error for Catch nodes. */
export function settledOrThrow(outcome: AnswerOutcome, msg: Record<string, unknown>, operation: string): unknown {
  if (outcome.outcome === 'answered') return outcome.sent;
  if (outcome.outcome === 'already-answered') msg.outcome = 'already-answered';
  if (outcome.outcome === 'changed') msg.outcome = 'changed';
  if (outcome.outcome === 'ambiguous') msg.outcome = 'ambiguous';
  throw (
    outcome.error ??
    new LhError(outcome.message, { kind: outcome.outcome === 'already-answered' ? 'already-answered' : 'instrument', operation })
  );
}

/** The B error's default action: `defaultActionId`, else the action marked `isDefault`. */
export function defaultActionOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const id = (error as Record<string, unknown>).defaultActionId;
  if (typeof id === 'number') return id;
  return offeredActions(error)?.find((a) => a.isDefault)?.id;
}
