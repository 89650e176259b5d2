/**
 * The operations of lh-protocol (export, plan, apply, validate) with what they need passed in: read the msg, call
 * the pure parts and the client, shape the result.
 */
import { randomUUID } from 'crypto';

import { withActor } from '../../audit';
import { LhError, type LiquidHandlerClient, protocolRef, urlKey, validationError } from '../../client';
import { type NodeMessage } from '../shared/node-red';
import { type OperationResult } from '../shared/operation-node';
import { applyPlan, ApplyStopped, readProtocol, requireUniqueNames } from './apply-plan';
import { exportDigest, readDesired } from './export-format';
import { makePlan, MAX_CHANGES, readPlan } from './plan';
import { planChanges } from './plan-make';

export const OPERATIONS = ['export', 'plan', 'apply', 'validate'] as const;
export type ProtocolOperation = (typeof OPERATIONS)[number];

export function protocolOperation(value: unknown): ProtocolOperation {
  if (typeof value === 'string' && (OPERATIONS as readonly string[]).includes(value)) return value as ProtocolOperation;
  throw validationError('lh-protocol', 'operation', `must be one of ${OPERATIONS.join(', ')}`, value);
}

/** What an operation needs from its node: the client, and the protocol the dialog or msg names (undefined: none). */
export interface ProtocolNodeContext {
  client: LiquidHandlerClient;
  msg: NodeMessage;
  namedProtocol(op: string): Promise<number | undefined>;
}

/** Runs one operation of lh-protocol; the node wires it (lh-protocol.ts). */
export async function runProtocolOperation(ctx: ProtocolNodeContext, operation: ProtocolOperation): Promise<OperationResult> {
  const { client, msg } = ctx;
  const requiredProtocol = async (op: string): Promise<number> => {
    const id = await ctx.namedProtocol(op);
    if (id === undefined) protocolRef(undefined, undefined, op); // throws: a protocol is required
    return id as number;
  };
  const op = `lh-protocol ${operation}`;
  switch (operation) {
    case 'export': {
      const read = await readProtocol(client.runs, await requiredProtocol(op), op);
      return {
        payload: read.export,
        status: { key: 'lh-protocol.status.steps', subs: { count: read.export.steps.length } },
        extra: { protocolId: read.protocolId, digest: read.digest },
      };
    }
    case 'plan': {
      const desired = readDesired(msg.payload, op); // bad input is refused before anything is sent
      const read = await readProtocol(client.runs, await requiredProtocol(op), op);
      requireUniqueNames(read, op);
      const { changes, target } = planChanges(read.export, desired);
      if (changes.length > MAX_CHANGES) {
        throw new LhError(
          `protocol ${read.protocolId} has ${read.export.steps.length} steps: the plan to the desired protocol takes ${changes.length} changes, more than the ${MAX_CHANGES} an apply takes; delete steps with lh-steps first, or plan the way there in parts`,
          { kind: 'validation', operation: op, field: 'steps' },
        );
      }
      const plan = makePlan({
        id: randomUUID(),
        protocolId: read.protocolId,
        protocolName: read.export.name,
        instrument: client.baseUrl,
        base: read.digest,
        target: exportDigest(target),
        changes,
      });
      readPlan(plan, op); // a plan apply would refuse (a protocol of thousands of steps) is refused here, not after approval
      return {
        payload: plan,
        status: { key: 'lh-protocol.status.changes', subs: { count: changes.length } },
        extra: { plan, protocolId: read.protocolId },
      };
    }
    case 'apply': {
      // what this apply tells is about this apply: a msg retried after a stop carries the earlier one's lists
      delete msg.applied;
      delete msg.notApplied;
      delete msg.unconfirmed;
      delete msg.outcome;
      const plan = readPlan(msg.plan, op);
      // one instrument however its URL is spelled (host case, trailing slash, localhost or 127.0.0.1), as homes key it
      if (urlKey(plan.instrument) !== urlKey(client.baseUrl)) {
        throw validationError(
          op,
          'plan.instrument',
          `is ${plan.instrument}: the plan was made for another instrument than this node's (${client.baseUrl})`,
        );
      }
      const named = await ctx.namedProtocol(op);
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
          msg.unconfirmed = err.unconfirmed;
        }
        throw err;
      }
    }
    case 'validate': {
      const result = await client.runs.validateProtocol(await requiredProtocol(op));
      return {
        payload: { isValid: result.isValid, validationErrors: result.validationErrors },
        status: { key: result.isValid ? 'lh-protocol.status.valid' : 'lh-protocol.status.invalid' },
        extra: { protocolId: result.protocolId },
      };
    }
  }
}
