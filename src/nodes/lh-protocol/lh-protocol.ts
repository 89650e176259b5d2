import { LhError, type LiquidHandlerClient, protocolRef, resolveProtocol } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { OPERATIONS, protocolOperation, runProtocolOperation } from './protocol-operations';

const filled = (x: unknown): boolean => x !== undefined && x !== null && x !== '';

export = function register(RED: Red): void {
  function LhProtocol(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node: Node = asNode(this);

    /** The protocol the dialog or the msg names (protocolId, else msg.protocolName), or undefined when none. */
    async function namedProtocol(client: LiquidHandlerClient, msg: NodeMessage, op: string): Promise<number | undefined> {
      const id = filled(config.protocolId)
        ? await resolveSetting(RED, node, msg, 'protocolId', config.protocolId, config.protocolIdType)
        : msg.protocolId;
      if (!filled(id) && !filled(msg.protocolName)) return undefined;
      return (await resolveProtocol(client.runs, protocolRef(id, msg.protocolName, op), op)).protocolId;
    }

    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const value = resolveOperation(msg, config.operation, OPERATIONS, 'lh-protocol');
      if (!filled(value)) {
        throw new LhError('operation is required: set it in the dialog or in msg.operation', {
          kind: 'validation',
          operation: 'lh-protocol',
          field: 'operation',
        });
      }
      const operation = protocolOperation(value);
      return runProtocolOperation({ client, msg, namedProtocol: (op) => namedProtocol(client, msg, op) }, operation);
    });
  }
  RED.nodes.registerType('lh-protocol', LhProtocol);
};
