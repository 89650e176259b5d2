/**
 * One answer to one error, the way the answer page and the error policy give it: through the client code of
 * lh-answer-error (answerBody) and lh-submit-recovery (recoveryBody), with at most one answer per error and
 * instrument from this Node-RED. The outcome says what happened, never success for an answer not made.
 *
 * The ledger here keeps the contract of the answer ledger (contracts.md) for these nodes until the client's own
 * ledger (`client.answers`) is merged; then `ledgerFor` switches to it and the rest stays.
 */
import { EventEmitter } from 'events';
import { asLhError, InstrumentError, LhError, LiquidHandlerClient, PendingError } from '../../client';
import { answerBody } from '../lh-answer-error/answer-body';
import { recoveryBody } from '../lh-submit-recovery/recovery-body';
import { offeredActions } from './error-records';

export type AnswerSource = 'A' | 'B';

/** An answer this Node-RED gave (what the ledger's lookup returns). */
export interface GivenAnswer {
  errorKey: string;
  /** A: the response; B: the action id as text */
  response: string;
  by?: string;
  at: number;
  outcome: 'answered';
}

export type AnswerOutcome =
  | { outcome: 'answered'; answer: GivenAnswer; sent: unknown }
  | { outcome: 'already-answered'; previous?: GivenAnswer; message: string }
  | { outcome: 'not-pending'; message: string }
  | { outcome: 'refused'; message: string; error: LhError }
  | { outcome: 'failed'; message: string; error: LhError };

interface Ledger {
  given: Map<string, GivenAnswer>;
  inFlight: Set<string>;
}

const MAX_REMEMBERED = 5000;
const ledgers = new Map<string, Ledger>();

/** Tells in-process listeners (an error policy's pending defaults) that an error was answered: `(instrument, errorKey)`. */
export const answerEvents = new EventEmitter();
answerEvents.setMaxListeners(0);

export function instrumentOf(client: LiquidHandlerClient): string {
  return `${client.transport.baseUrl}|${client.transport.instrumentUrl ?? ''}`;
}

function ledgerFor(client: LiquidHandlerClient): Ledger {
  const key = instrumentOf(client);
  let ledger = ledgers.get(key);
  if (!ledger) ledgers.set(key, (ledger = { given: new Map(), inFlight: new Set() }));
  return ledger;
}

/** The answer this Node-RED gave to the error, if any. */
export function lookupAnswer(client: LiquidHandlerClient, errorKey: string): GivenAnswer | undefined {
  return ledgerFor(client).given.get(errorKey);
}

/** Forgets every answer (what a restart of Node-RED does; for tests). */
export function forgetAllAnswers(): void {
  ledgers.clear();
}

function alreadyAnswered(key: string, previous: GivenAnswer | undefined): AnswerOutcome {
  const message = previous
    ? `error ${key} was already answered with ${previous.response}${previous.by ? ` by ${previous.by}` : ''}`
    : `error ${key} was already answered`;
  return { outcome: 'already-answered', previous, message };
}

/** What a failed answer means for the person or the rule that gave it. */
export function classify(err: unknown, operation: string): AnswerOutcome {
  const e = asLhError(err, operation);
  if (e.code === 'LH_ALREADY_ANSWERED' || e.statusCode === 409) return { outcome: 'already-answered', message: e.message };
  if (e.statusCode === 404) return { outcome: 'not-pending', message: e.message };
  if (e.kind === 'instrument' && /already (been )?handled/i.test(e.message)) return { outcome: 'already-answered', message: e.message };
  if (e.kind === 'network' || e.kind === 'timeout' || e.kind === 'tls' || e.kind === 'auth' || (e.statusCode ?? 0) >= 500)
    return { outcome: 'failed', message: e.message, error: e };
  return { outcome: 'refused', message: e.message, error: e };
}

async function once(client: LiquidHandlerClient, key: string, response: string, by: string | undefined, send: () => Promise<unknown>): Promise<AnswerOutcome> {
  const ledger = ledgerFor(client);
  const previous = ledger.given.get(key);
  if (previous || ledger.inFlight.has(key)) return alreadyAnswered(key, previous);
  ledger.inFlight.add(key);
  try {
    const sent = await send();
    const answer: GivenAnswer = { errorKey: key, response, at: Date.now(), outcome: 'answered', ...(by ? { by } : {}) };
    ledger.given.set(key, answer);
    if (ledger.given.size > MAX_REMEMBERED) ledger.given.delete(ledger.given.keys().next().value as string);
    answerEvents.emit('answered', instrumentOf(client), key);
    return { outcome: 'answered', answer, sent };
  } catch (err) {
    return classify(err, 'answer');
  } finally {
    ledger.inFlight.delete(key);
  }
}

/** Answers an A error (a pending error as lh-error-poll emitted it) with one of its responses. */
export function answerA(client: LiquidHandlerClient, error: PendingError, response: string, by?: string): Promise<AnswerOutcome> {
  let body: ReturnType<typeof answerBody>;
  try {
    body = answerBody(error, response, undefined);
  } catch (err) {
    return Promise.resolve(classify(err, 'answer-error'));
  }
  return once(client, String(error.id), response, by, async () => {
    await client.prep.answerRuntimeError(body);
    return body;
  });
}

/** Submits a B error's action (a recovery when the action says so), with the lh-server node's client key. */
export function answerB(
  client: LiquidHandlerClient,
  error: InstrumentError,
  actionId: number,
  errorHandlingKey: string | null,
  by?: string,
): Promise<AnswerOutcome> {
  const action = offeredActions(error)?.find((a) => a.id === actionId);
  const kind = action?.isRecovery === false ? 'action' : 'recovery';
  const op = kind === 'recovery' ? 'submit-recovery' : 'submit-action';
  let body: ReturnType<typeof recoveryBody>;
  try {
    body = recoveryBody({ payload: error }, { kind, uuid: error.uuid, selectedActionId: actionId, errorHandlingKey }, op);
  } catch (err) {
    return Promise.resolve(classify(err, op));
  }
  return once(client, error.uuid, String(actionId), by, () => client.instrument.submit(kind, body));
}

/** The B error's default action: `defaultActionId`, else the action marked `isDefault`. */
export function defaultActionOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const id = (error as Record<string, unknown>).defaultActionId;
  if (typeof id === 'number') return id;
  return offeredActions(error)?.find((a) => a.isDefault)?.id;
}
