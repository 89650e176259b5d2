/** The one way nodes write to the Node-RED log: every line passes the redaction step first. */
import { isLoginWithoutVerdict, LhError } from '../../client';
import { type Node } from './node-red';
import { redact } from './redaction';

function text(message: unknown): string {
  return redact(message instanceof Error ? message.message : String(message));
}

export function logInfo(node: Node, message: unknown): void {
  node.log(text(message));
}

export function logWarn(node: Node, message: unknown): void {
  node.warn(text(message));
}

/**
 * A node's failure outside a msg (e.g. registering when the flow starts): an error line, except when the instrument
 * could not be reached (no answer, timeout): the node's status shows that, and its lh-server says it once for the
 * instrument, so a Node-RED started without its instrument logs one warning, not an error per node and per attempt.
 */
export function logNodeFailure(node: Node, err: unknown): void {
  if (isUnreachable(err)) return;
  node.error(text(err));
}

/** The instrument did not answer (network error or timeout): a state of the instrument, not a fault of the node. */
export function isUnreachable(err: unknown): boolean {
  return err instanceof LhError && (err.kind === 'network' || err.kind === 'timeout');
}

/** Logs an error line (without a msg: it does not trigger Catch nodes; use fail() for that). */
export function logError(node: Node, message: unknown): void {
  node.error(text(message));
}

/**
 * Whether `message` is the refused login of `client`'s session (rejected, expired password, locked out): its lh-server
 * logs that once, so the nodes of the instrument do not log it again, each (they show it in their status).
 */
export function loginRefusalOf(client: { session: { loginBlockedBy?: { message: string } } }, message: string): boolean {
  const blocked = client.session.loginBlockedBy;
  return blocked !== undefined && blocked.message !== '' && message.includes(blocked.message);
}

/**
 * Whether a node's failure is its lh-server's to log, not the node's (the node shows it in its status): a refused
 * login (loginRefusalOf), or a login that failed without a verdict or was not sent for such failures (the instrument
 * failing: its lh-server says it once, as it says an outage).
 */
export function serverSaysIt(client: { session: { loginBlockedBy?: { message: string } } }, err: unknown): boolean {
  if (isLoginWithoutVerdict(err)) return true;
  return err instanceof Error && loginRefusalOf(client, err.message);
}
