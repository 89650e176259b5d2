import { identityOf, LhError, type LiquidHandlerClient, type PendingError, sameError, validate as v } from '../../client';
import { answerBody, answeredBy, pendingErrorIn } from '../answering/answer-body';
import { isFirmwareError, sendAnswerA, settledOrThrow } from '../answering/answer-error';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { refuseContradicted, resolveSetting } from '../shared/typed-inputs';

const OP = 'answer-error';

/** The error to answer: msg.payload as lh-error-poll emitted it, else the pending error with the given id. */
async function findError(client: LiquidHandlerClient, msg: NodeMessage, configuredId: unknown): Promise<PendingError> {
  const fromPayload = configuredId === undefined || configuredId === '' ? pendingErrorIn(msg.payload) : undefined;
  if (fromPayload) return withItems(client, fromPayload);
  const rawId = configuredId !== undefined && configuredId !== '' ? configuredId : msg.errorId;
  if (rawId === undefined || rawId === null || rawId === '') {
    throw new LhError(
      'errorId is required: wire an error from lh-error-poll (msg.payload), or set msg.errorId or the Error id setting',
      { kind: 'validation', operation: OP, field: 'errorId' },
    );
  }
  const id = v.errorId(rawId, 'errorId', OP);
  const pending = await client.prep.pendingErrors();
  const groupId = typeof msg.groupId === 'string' && msg.groupId !== '' ? msg.groupId : undefined;
  const found = pending.find(
    (e) => String(e.id) === id && (groupId === undefined || e.groupId === undefined || e.groupId === groupId),
  );
  if (!found) {
    throw new LhError(
      `error ${id}${groupId ? ` (group ${groupId})` : ''} is not pending: it may have been answered or cleared already`,
      {
        kind: 'validation',
        operation: OP,
        field: 'errorId',
      },
    );
  }
  return found;
}

/**
 * An error given without its items (`errorData` absent: a page that shows id, title, severity and responses, as
 * example 07's buttons send it) gets its items and group from the record the instrument lists for it now: an error
 * with items is answered per item, and an answer to the error's own id would be refused. One given with
 * `errorResponses: null` gets the responses listed, so the response is checked against them, and is refused when the
 * instrument lists no error under its id (nothing to check against). Not listed, or listed more than once: as given
 * (the answer path then says why).
 */
async function withItems(client: LiquidHandlerClient, error: PendingError): Promise<PendingError> {
  const noResponses = (error.errorResponses as unknown) === null;
  if (Array.isArray(error.errorData) && !noResponses) return error;
  const seen = identityOf(error);
  const listed = (await client.prep.pendingErrors()).filter((e) => {
    const now = identityOf(e);
    return String(e.id) === String(error.id) && (!seen || !now || sameError(seen, now));
  });
  if (listed.length === 0 && noResponses) {
    // null says the responses are not known (a list of [] says any): with nothing listed they cannot be checked
    throw new LhError(
      `payload.errorResponses is null and the instrument does not list error ${String(error.id)} now (answered or cleared already?): the response cannot be checked against the error's; nothing was sent`,
      { kind: 'validation', operation: OP, field: 'payload.errorResponses' },
    );
  }
  if (listed.length !== 1) return error;
  const found = listed[0];
  return {
    ...error,
    ...(Array.isArray(found.errorData) && !Array.isArray(error.errorData) ? { errorData: found.errorData } : {}),
    ...(noResponses && Array.isArray(found.errorResponses) ? { errorResponses: found.errorResponses } : {}),
    ...(error.groupId === undefined && typeof found.groupId === 'string' ? { groupId: found.groupId } : {}),
  };
}

export = function register(RED: Red): void {
  function LhAnswerError(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      // Everything is checked before anything is sent; looking the error up is a read.
      const selected = await resolveSetting(
        RED,
        node,
        msg,
        'selectedResponse',
        config.selectedResponse,
        config.selectedResponseType,
      );
      refuseContradicted(msg, 'selectedResponse', config.selectedResponse, config.selectedResponseType, selected, OP);
      if (selected === undefined || selected === null || selected === '') {
        throw new LhError('selectedResponse is required: set it in the dialog or in msg.selectedResponse', {
          kind: 'validation',
          operation: OP,
          field: 'selectedResponse',
        });
      }
      const configuredId = await resolveSetting(RED, node, msg, 'errorId', config.errorId, config.errorIdType);
      const error = await findError(client, msg, config.errorId ? configuredId : undefined);
      const body = answerBody(error, selected, msg.errorDataResponses, msg.groupId);
      // the error as lh-error-poll emitted it, or as the list showed it under the given id just now: when the
      // instrument lists another error under its id by the time the answer goes, nothing is sent, and the ledger
      // keeps what error the answer went to (an answer by id alone never counts for a later error under that id)
      const seen = identityOf(error);
      // the one answering path (ledger, outcome, answer events that cancel a policy's pending default)
      const firmware = !config.errorId && isFirmwareError(msg.payload); // never in the error list: the ledger keeps its answer
      settledOrThrow(await sendAnswerA(client, body, answeredBy(msg, node.name || node.id), seen, firmware), msg, OP);
      return { payload: body, status: { key: 'answered' }, extra: { outcome: 'answered' } };
    });
  }
  RED.nodes.registerType('lh-answer-error', LhAnswerError);
};
