import { LhError, LiquidHandlerClient, validate as v } from '../../client';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { logError } from '../shared/node-log';
import { migrateConfig } from '../shared/migrations';
import { runOperationNode } from '../shared/operation-node';
import { LhServerNode, requireClient } from '../shared/server-node';
import { isChecked, resolveChoice, resolveSetting } from '../shared/settings';
import { Status } from '../shared/status';

const OPERATIONS = ['register', 'unregister', 'check'] as const;
type Operation = (typeof OPERATIONS)[number];
/** How long closing waits for the unregistration (Node-RED itself gives up on a close after 15 s). */
const UNREGISTER_ON_CLOSE_MS = 4000;

function operationOf(value: unknown): Operation {
  return v.oneOf(value, OPERATIONS, 'operation', 'error-handler');
}

/** The key: the dialog's (or what it points at), else msg.clientKey, else the lh-server node's; letters and digits only. */
async function clientKeyFor(RED: Red, node: Node, config: NodeConfig, msg: NodeMessage, server: LhServerNode, op: string): Promise<string> {
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

    runOperationNode(RED, node, config, async ({ client, server, msg }) => {
      const operation = operationOf(resolveChoice(msg, 'operation', config.operation));
      if (operation === 'check') {
        const registered = await client.instrument.isErrorHandlerRegistered();
        return { payload: registered, status: { key: registered ? 'registered' : 'notRegistered' } };
      }
      const op = operation === 'register' ? 'register-error-handler' : 'unregister-error-handler';
      const key = await clientKeyFor(RED, node, config, msg, server, op);
      const text =
        operation === 'register' ? await client.instrument.registerErrorHandler(key) : await client.instrument.unregisterErrorHandler(key);
      return { payload: text, status: { key: operation === 'register' ? 'registered' : 'unregistered' }, extra: { clientKey: key } };
    });

    if (isChecked(config.autoRegister)) registerWhileDeployed(RED, node, config);
  }
  RED.nodes.registerType('lh-register-handler', LhRegisterHandler);
};

/** Registers when the flow starts and unregisters (within a bounded time) when the node stops. */
function registerWhileDeployed(RED: Red, node: Node, config: NodeConfig): void {
  const status = new Status(node, RED);
  let client: LiquidHandlerClient | undefined;
  let registration: Promise<string | undefined> = Promise.resolve(undefined);
  try {
    const found = requireClient(RED, config.server, node.type);
    client = found.client;
    const server = found.server;
    registration = (async () => {
      const key = await clientKeyFor(RED, node, config, {}, server, 'register-error-handler');
      await found.client.instrument.registerErrorHandler(key);
      status.ok('registered');
      return key;
    })();
    registration.catch((err: unknown) => {
      status.failed(err);
      logError(node, err);
    });
  } catch (err) {
    status.failed(err);
    logError(node, err);
  }

  node.on('close', (_removed: boolean, done: () => void) => {
    if (!client) return done();
    const active = client;
    const unregister = registration.then(
      (key) => (key ? active.instrument.unregisterErrorHandler(key) : undefined),
      () => undefined,
    );
    active.finishBeforeClose(unregister);
    withTimeout(unregister, UNREGISTER_ON_CLOSE_MS)
      .catch((err: unknown) => node.warn(RED._('lh-register-handler.errors.unregister', { message: err instanceof Error ? err.message : String(err) })))
      .finally(() => done());
  });
}
