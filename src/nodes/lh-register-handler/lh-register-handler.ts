import { LhError, type LiquidHandlerClient, validate as v } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { logError, logNodeFailure } from '../shared/node-log';
import { asNode, type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { redact } from '../shared/redaction';
import { type LhServerNode, requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { isChecked, resolveOperation, resolveSetting } from '../shared/typed-inputs';

const OPERATIONS = ['register', 'unregister', 'check'] as const;
type Operation = (typeof OPERATIONS)[number];
/** How long closing waits for the unregistration (Node-RED itself gives up on a close after 15 s). */
const UNREGISTER_ON_CLOSE_MS = 4000;

function operationOf(value: unknown): Operation {
  return v.oneOf(value, OPERATIONS, 'operation', 'error-handler');
}

/** The key: the dialog's (or what it points at), else msg.clientKey, else the lh-server node's; letters and digits only. */
async function clientKeyFor(
  RED: Red,
  node: Node,
  config: NodeConfig,
  msg: NodeMessage,
  server: LhServerNode,
  op: string,
): Promise<string> {
  const given = await resolveSetting(RED, node, msg, 'clientKey', config.clientKey, config.clientKeyType);
  const key = given === undefined || given === null || given === '' ? server.clientKey : given;
  if (key === undefined || key === null || key === '') {
    throw new LhError('clientKey is required: set the client key in the lh-server node, in this node or in msg.clientKey', {
      kind: 'validation',
      operation: op,
      field: 'clientKey',
    });
  }
  return v.clientKey(key, 'clientKey', op);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export = function register(RED: Red): void {
  function LhRegisterHandler(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);

    runOperationNode(
      RED,
      node,
      config,
      async ({ client, server, msg }) => {
        const operation = operationOf(resolveOperation(msg, config.operation, OPERATIONS, 'lh-register-handler'));
        if (operation === 'check') {
          const registered = await client.instrument.isErrorHandlerRegistered();
          return { payload: registered, status: { key: registered ? 'registered' : 'notRegistered' } };
        }
        const op = operation === 'register' ? 'register-error-handler' : 'unregister-error-handler';
        const key = await clientKeyFor(RED, node, config, msg, server, op);
        const text =
          operation === 'register'
            ? await client.instrument.registerErrorHandler(key)
            : await client.instrument.unregisterErrorHandler(key);
        return {
          payload: text,
          status: { key: operation === 'register' ? 'registered' : 'unregistered' },
          extra: { clientKey: key },
        };
        // interface B alone: an outage of A is not this node's (its status follows B)
      },
      { apis: ['B'] },
    );

    if (isChecked(config.autoRegister)) registerWhileDeployed(RED, node, config);
  }
  RED.nodes.registerType('lh-register-handler', LhRegisterHandler);
};

type SharedRegistration = (op: 'add' | 'remove') => Promise<number>;

/**
 * Counts this replica among the registration's users, retrying while Redis is still connecting (at start); the
 * handler is registered either way (a count Redis refused is written at the coordinator's next round it answers).
 */
async function joinUsers(shared: SharedRegistration, tries = 20): Promise<void> {
  for (let i = 1; i <= tries; i++) {
    try {
      await shared('add');
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * i)));
    }
  }
}

/**
 * Whether this replica was the last live one using the registration (several Node-REDs through an lh-coordination
 * node): the others still handle B errors with it, so only the last unregisters. When Redis cannot say, the
 * registration stays (a handler left registered is undone by the next replica's stop; one removed under the others
 * leaves their B errors unhandled).
 */
async function lastUser(shared: SharedRegistration, warn: (text: string) => void): Promise<boolean> {
  try {
    return (await shared('remove')) === 0;
  } catch (err) {
    warn(
      `the error handler stays registered: Redis cannot say whether other Node-REDs still use it (${err instanceof Error ? err.message : String(err)})`,
    );
    return false;
  }
}

/** Registers when the flow starts and unregisters (within a bounded time) when the node stops. */
function registerWhileDeployed(RED: Red, node: Node, config: NodeConfig): void {
  const status = new Status(node, RED);
  let client: LiquidHandlerClient | undefined;
  let registration: Promise<string | undefined> = Promise.resolve(undefined);
  /** with coordination: the replicas sharing the registration (only the last live one unregisters) */
  let shared: SharedRegistration | undefined;
  try {
    const found = requireClient(RED, config.server, node.type);
    client = found.client;
    const server = found.server;
    const coordinator = server.coordination ? server.coordinator : undefined;
    registration = (async () => {
      const key = await clientKeyFor(RED, node, config, {}, server, 'register-error-handler');
      if (coordinator) {
        shared = (op) => coordinator.registrationUsers(server.instrumentKey, `error-handler:${key}`, op);
        await joinUsers(shared);
      }
      await found.client.instrument.registerErrorHandler(key);
      status.ok('registered');
      return key;
    })();
    registration.catch((err: unknown) => {
      status.failed(err);
      logNodeFailure(node, err); // unreachable: the status, and the lh-server's one warning for the instrument
    });
  } catch (err) {
    status.failed(err);
    logError(node, err);
  }

  node.on('close', (_removed: boolean, done: () => void) => {
    if (!client) return done();
    const active = client;
    const unregister = registration.then(
      async (key) => {
        if (!key) return undefined;
        if (shared && !(await lastUser(shared, (text) => node.warn(redact(text))))) return undefined;
        return active.instrument.unregisterErrorHandler(key);
      },
      () => undefined,
    );
    active.finishBeforeClose(unregister);
    withTimeout(unregister, UNREGISTER_ON_CLOSE_MS)
      .catch((err: unknown) =>
        node.warn(RED._('lh-register-handler.errors.unregister', { message: err instanceof Error ? err.message : String(err) })),
      )
      .finally(() => done());
  });
}
