import { Actor, AuditSettings, AuditUse, useAuditTrail, withActor } from '../../audit';
import { NodeMessage, Node, Red } from './node-red';

/**
 * The audit trail of an lh-server node's instrument, per `lhAudit` in settings.js (on by default, in
 * `<userDir>/lh-audit`). Throws when auditing is on but cannot start (e.g. an unreadable key file): the node then
 * has no client and sends nothing.
 */
export function serverAuditTrail(RED: Red, node: Node, instrument: string, secrets: () => readonly string[]): AuditUse | undefined {
  const settings = RED.settings as unknown as { lhAudit?: AuditSettings; userDir?: string };
  return useAuditTrail(settings.lhAudit, settings.userDir, instrument, { node: node.id, nodeType: node.type }, secrets);
}

/** The authenticated user of an http-in request (httpNodeAuth) or an editor request (adminAuth), if any. */
export function requestUser(req: unknown): string | undefined {
  const user = (req as { user?: { username?: unknown; name?: unknown } } | undefined)?.user;
  const name = user?.username ?? user?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Who a node acts for: the node, its flow, and the http-in user behind the msg when there is one. */
export function nodeActor(node: Node, msg?: NodeMessage): Actor {
  const z = (node as Node & { z?: string }).z;
  const user = requestUser((msg as { req?: unknown } | undefined)?.req);
  return { node: node.id, nodeType: node.type, ...(z ? { flow: z } : {}), ...(user ? { user } : {}) };
}

/** Runs a node's instrument work with the node (and msg's user) recorded as the actor of every request it makes. */
export function asNodeActor<R>(node: Node, msg: NodeMessage | undefined, work: () => R): R {
  return withActor(nodeActor(node, msg), work);
}
