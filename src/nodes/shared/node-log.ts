/** The one way nodes write to the Node-RED log: every line passes the redaction step first. */
import { Node } from './node-red';
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

/** Logs an error line (without a msg: it does not trigger Catch nodes; use fail() for that). */
export function logError(node: Node, message: unknown): void {
  node.error(text(message));
}
