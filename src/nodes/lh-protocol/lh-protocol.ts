import { randomUUID } from 'crypto';

import { withActor } from '../../audit';
import { LhError, LiquidHandlerClient, protocolRef, resolveProtocol, validationError } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { OperationResult, runOperationNode } from '../shared/operation-node';
import { resolveChoice, resolveSetting } from '../shared/typed-inputs';
import { applyPlan, ApplyStopped, readProtocol, requireUniqueNames } from './apply-plan';
import { exportDigest, readDesired } from './export-format';
import { makePlan, readPlan } from './plan';
import { planChanges } from './plan-make';

const OPERATIONS = ['export', 'plan', 'apply', 'validate'] as const;
type ProtocolOperation = (typeof OPERATIONS)[number];

function protocolOperation(value: unknown): ProtocolOperation {
  if (typeof value === 'string' && (OPERATIONS as readonly string[]).includes(value)) return value as ProtocolOperation;
  throw validationError('lh-protocol', 'operation', `must be one of ${OPERATIONS.join(', ')}`, value);
}

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

    async function requiredProtocol(client: LiquidHandlerClient, msg: NodeMessage, op: string): Promise<number> {
      const id = await namedProtocol(client, msg, op);
      if (id === undefined) protocolRef(undefined, undefined, op); // throws: a protocol is required
      return id as number;
    }

    async function run(client: LiquidHandlerClient, msg: NodeMessage, operation: ProtocolOperation): Promise<OperationResult> {
      const op = `lh-protocol ${operation}`;
      switch (operation) {
        case 'export': {
          const read = await readProtocol(client.runs, await requiredProtocol(client, msg, op), op);
          return {
            payload: read.export,
            status: { key: 'lh-protocol.status.steps', subs: { count: read.export.steps.length } },
            extra: { protocolId: read.protocolId, digest: read.digest },
          };
        }
        case 'plan': {
          const desired = readDesired(msg.payload, op); // bad input is refused before anything is sent
          const read = await readProtocol(client.runs, await requiredProtocol(client, msg, op), op);
          requireUniqueNames(read, op);
          const { changes, target } = planChanges(read.export, desired);
          const plan = makePlan({
            id: randomUUID(),
            protocolId: read.protocolId,
            protocolName: read.export.name,
            instrument: client.baseUrl,
            base: read.digest,
            target: exportDigest(target),
            changes,
          });
          return {
            payload: plan,
            status: { key: 'lh-protocol.status.changes', subs: { count: changes.length } },
            extra: { plan, protocolId: read.protocolId },
          };
        }
        case 'apply': {
          const plan = readPlan(msg.plan, op);
          if (plan.instrument !== client.baseUrl) {
            throw validationError(
              op,
              'plan.instrument',
              `is ${plan.instrument}: the plan was made for another instrument than this node's (${client.baseUrl})`,
            );
          }
          const named = await namedProtocol(client, msg, op);
          if (named !== undefined && named !== plan.protocolId) {
            throw validationError(
              op,
              'plan.protocolId',
              `is ${plan.protocolId}: the plan was made for another protocol than the one given (${named})`,
            );
          }
          try {
            const result = await applyPlan(
              { prep: client.prep, runs: client.runs, audited: (why, work) => withActor({ why }, work) },
              plan,
              op,
            );
            if (result.outcome === 'unchanged') {
              return {
                payload: { applied: [] },
                status: { key: 'lh-protocol.status.unchanged' },
                extra: { outcome: 'unchanged', protocolId: plan.protocolId },
              };
            }
            return {
              payload: { protocol: result.protocol, applied: result.applied },
              status: { key: 'lh-protocol.status.applied', subs: { count: result.applied.length } },
              extra: { outcome: 'applied', protocolId: plan.protocolId },
            };
          } catch (err) {
            if (err instanceof ApplyStopped) {
              msg.applied = err.applied;
              msg.notApplied = err.notApplied;
            }
            throw err;
          }
        }
        case 'validate': {
          const result = await client.runs.validateProtocol(await requiredProtocol(client, msg, op));
          return {
            payload: { isValid: result.isValid, validationErrors: result.validationErrors },
            status: { key: result.isValid ? 'lh-protocol.status.valid' : 'lh-protocol.status.invalid' },
            extra: { protocolId: result.protocolId },
          };
        }
      }
    }

    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const value = resolveChoice(msg, 'operation', config.operation);
      if (!filled(value))
        throw new LhError('operation is required: set it in the dialog or in msg.operation', {
          kind: 'validation',
          operation: 'lh-protocol',
          field: 'operation',
        });
      return run(client, msg, protocolOperation(value));
    });
  }
  RED.nodes.registerType('lh-protocol', LhProtocol);
};
