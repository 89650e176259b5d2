import { asLhError, LhError, type LiquidHandlerClient } from '../../client';
import { clippedInTheMiddle, shownInLog } from '../../observe/whole-characters';
import { asNodeActor, httpNodeBasicChecked } from './audit';
import { type Api } from './connection-state';
import { cutTooDeep } from './msg-depth';
import { type Node, type NodeConfig, type NodeMessage, type Red } from './node-red';
import { redactDeep, redactErr } from './redaction';
import { isServerNode, type LhServerNode, requireClient } from './server-node';
import { Status } from './status';

export interface OperationResult {
  payload: unknown;
  statusCode?: number;
  /** Key of `common.status.*` (with substitutions) for the green status after success. */
  status?: { key: string; subs?: Record<string, unknown> };
  /** Further msg properties to set, e.g. `totalItemCount`. */
  extra?: Record<string, unknown>;
}

export interface OperationContext {
  msg: NodeMessage;
  node: Node;
  server: LhServerNode;
  client: LiquidHandlerClient;
  status: Status;
}

export type OperationHandler = (ctx: OperationContext) => Promise<OperationResult>;

/**
 * Wires an operation node: finds the config node, shows progress, puts the answer in msg.payload and the status code
 * in msg.statusCode, and sends failures to Catch nodes with msg.error = {message, statusCode, operation, body}.
 * `apis`: the interfaces the node uses, whose connection state its status follows (default A; a node of interface B
 * alone says B, so an outage of A never shows as "offline" on it).
 */
export function runOperationNode(
  RED: Red,
  node: Node,
  config: NodeConfig,
  handler: OperationHandler,
  options: { apis?: readonly Api[] } = {},
): void {
  const status = new Status(node, RED);
  const serverId = config.server as string | undefined;
  const server = serverId ? RED.nodes.getNode(serverId) : undefined;
  if (!server) status.failed(new LhError('no instrument configured', { kind: 'config', operation: node.type }));
  // offline and a refused login are the server's, shown by every node of it
  else if (isServerNode(server)) status.follow(server.connection, { apis: options.apis });

  node.on('input', (msg, send, done) => {
    let ctx: OperationContext;
    try {
      const { server, client } = requireClient(RED, serverId, node.type);
      ctx = { msg, node, server, client, status };
    } catch (err) {
      fail(node, status, msg, err, done);
      return;
    }
    status.busy();
    asNodeActor(node, msg, () => handler(ctx), httpNodeBasicChecked(RED)).then(
      (result) => {
        msg.payload = result.payload;
        msg.statusCode = result.statusCode ?? 200;
        if (result.extra) Object.assign(msg, result.extra);
        if (result.status) status.ok(result.status.key, result.status.subs);
        else status.ok('done');
        send(msg);
        done();
      },
      (err: unknown) => fail(node, status, msg, err, done),
    );
  });
}

/** Reports a failure the one way every node does it, with every secret taken out of what it shows. */
export function fail(node: Node, status: Status, msg: NodeMessage, err: unknown, done: (err?: Error) => void): void {
  // Redacted in place: the same error reaches Catch nodes (message, cause), the log and the status.
  const error = shownAsOneLine(redactErr(asLhError(err, node.type)));
  msg.error = redactDeep(error.toMsgError());
  cutTooDeep(msg); // Node-RED copies the msg for each Catch node: one nested thousands of levels deep would end it
  status.failed(error);
  done(error);
}

/** The longest message a failure shows (at Catch, in the log, in msg.error); what it echoes is cut with "…". */
export const MAX_FAILURE_MESSAGE = 1000;

/**
 * The error with its message as one line of at most MAX_FAILURE_MESSAGE characters, in place (its stack's first line
 * too, which a verbose log shows): a message echoes what the msg held (a body's key, a protocol name, a JSONata
 * error) or the instrument sent, and a line break in it started a forged log line, a bidi override reordered one, a
 * key of 200,000 characters made a message that long.
 */
export function shownAsOneLine<E extends Error>(error: E): E {
  const was = error.message;
  const shown = clippedInTheMiddle(shownInLog(was), MAX_FAILURE_MESSAGE);
  if (shown === was) return error;
  error.message = shown;
  const head = `${error.name}: ${was}`;
  if (typeof error.stack === 'string' && error.stack.startsWith(head))
    error.stack = `${error.name}: ${shown}${error.stack.slice(head.length)}`;
  return error;
}
