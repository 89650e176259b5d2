import { identityOf, validate as v } from '../../client';
import { answeredBy } from '../answering/answer-body';
import { sendRecovery, settledOrThrow } from '../answering/answer-error';
import { kindOf, recoveryBody } from '../answering/recovery-body';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { refuseContradicted, resolveChoice, resolveSetting, sameWholeNumber } from '../shared/typed-inputs';

export = function register(RED: Red): void {
  function LhSubmitRecovery(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(
      RED,
      node,
      config,
      async ({ client, server, msg }) => {
        const kind = kindOf(resolveChoice(msg, 'kind', config.kind), 'submit-recovery');
        const op = kind === 'recovery' ? 'submit-recovery' : 'submit-action';
        const uuid = await resolveSetting(RED, node, msg, 'uuid', config.uuid, config.uuidType);
        const selectedActionId = await resolveSetting(
          RED,
          node,
          msg,
          'selectedActionId',
          config.selectedActionId,
          config.selectedActionIdType,
        );
        // one action id in any form the id check reads (3, "3", " 3", "03") is no contradiction
        refuseContradicted(
          msg,
          'selectedActionId',
          config.selectedActionId,
          config.selectedActionIdType,
          selectedActionId,
          op,
          sameWholeNumber,
        );
        const givenKey = msg.errorHandlingKey ?? msg.clientKey;
        const key = givenKey === undefined || givenKey === null || givenKey === '' ? server.clientKey : givenKey;
        const errorHandlingKey = key === undefined || key === '' ? null : v.clientKey(key, 'errorHandlingKey', op);
        const body = recoveryBody(msg, { kind, uuid: uuid === '' ? undefined : uuid, selectedActionId, errorHandlingKey }, op);
        // Sent once: a refusal (success: false) becomes an error for Catch nodes, nothing is retried. The one answering
        // path (ledger, outcome, answer events that cancel a policy's pending default).
        // the error as lh-error-poll emitted it (msg.payload): another error under its uuid now gets nothing
        const seen = identityOf(msg.payload);
        const expected = seen && seen.id === body.uuid ? seen : undefined;
        const outcome = await sendRecovery(client, kind, body, answeredBy(msg, node.name || node.id), expected);
        const result = settledOrThrow(outcome, msg, op);
        // the error as the instrument lists it (a uuid typed in another letter case is answered under that spelling)
        const answered = outcome.outcome === 'answered' ? outcome.answer.errorKey : body.uuid;
        return {
          payload: result,
          status: { key: 'submitted' },
          extra: { uuid: answered, selectedActionId: body.selectedActionId, outcome: 'answered' },
        };
        // interface B alone: an outage of A is not this node's (its status follows B)
      },
      { apis: ['B'] },
    );
  }
  RED.nodes.registerType('lh-submit-recovery', LhSubmitRecovery);
};
