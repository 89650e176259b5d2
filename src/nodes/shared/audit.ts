import { type Actor, type AuditRedis, type AuditSettings, type AuditUse, onAuditProblem, withActor } from '../../audit';
import type { Coordinator } from '../../coordination/coordinator';
import type { InstrumentHome } from '../../instrument';
import { logError, logWarn } from './node-log';
import { type Node, type NodeMessage, type Red } from './node-red';

/**
 * The audit trail of an lh-server node's instrument (kept in its home), per `lhAudit` in settings.js (on by default, in
 * `<userDir>/lh-audit`). Throws when auditing is on but cannot start (e.g. an unreadable key file): the node then
 * has no client and sends nothing.
 */
export function serverAuditTrail(
  RED: Red,
  node: Node,
  home: InstrumentHome,
  instrument: string,
  secrets: () => readonly string[],
  coordinator?: Coordinator,
): AuditUse | undefined {
  const settings = RED.settings as unknown as { lhAudit?: AuditSettings; userDir?: string };
  const fallback = { node: node.id, nodeType: node.type };
  if (!coordinator) {
    const use = home.audit.useFile(settings.lhAudit, settings.userDir, instrument, fallback, secrets);
    if (!use) return undefined;
    // the chain refuses to record (its file deleted, the disk full): every request is refused; the log says why, once
    const stop = onAuditProblem((problem) => {
      if (problem.instrument !== instrument) return;
      if (problem.kind === 'refusing') logError(node, problem.message);
      else logWarn(node, problem.message);
    });
    return { ...use, release: () => (stop(), use.release()) };
  }
  // several Node-REDs: one chain per instrument in a Redis stream, shared by them all (the coordination's connection)
  const keys = coordinator.keys.instrument(instrument);
  const stream = { stream: keys.audit, head: keys.auditHead, checkpoint: keys.auditCheckpoint };
  return home.audit.useRedis(
    settings.lhAudit,
    coordinator.redis as unknown as AuditRedis,
    stream,
    instrument,
    fallback,
    secrets,
    (text) => logWarn(node, text),
  );
}

/**
 * The authenticated user of an editor request (adminAuth sets `req.user`) or of an http-in request (httpNodeAuth
 * checks HTTP Basic credentials: the user name is taken from that header, the password never), if any.
 * `basicChecked`: Node-RED checked the Basic header's password before the request got here (httpNodeAuth for http-in
 * requests, httpAdminAuth for editor requests). Without that check the header is whatever the caller wrote: it names
 * nobody, so no record claims an authenticated user that nothing authenticated.
 */
export function requestUser(req: unknown, basicChecked = false): string | undefined {
  const r = req as { user?: { username?: unknown; name?: unknown }; headers?: Record<string, unknown> } | undefined;
  const name = r?.user?.username ?? r?.user?.name;
  if (typeof name === 'string' && name !== '') return name;
  if (!basicChecked) return undefined;
  const header = r?.headers?.authorization;
  const basic = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? '' : decoded.slice(0, colon);
  return user !== '' ? user.slice(0, 200) : undefined;
}

/** Whether Node-RED checks the Basic credentials of http-in requests (httpNodeAuth) before a flow sees them. */
export function httpNodeBasicChecked(RED: Red): boolean {
  return !!RED.settings.httpNodeAuth;
}

/** Whether Node-RED checks the Basic credentials of editor requests (the deprecated httpAdminAuth). */
export function httpAdminBasicChecked(RED: Red): boolean {
  return !!(RED.settings as unknown as { httpAdminAuth?: unknown }).httpAdminAuth;
}

/**
 * Who a node acts for: the node, its flow, and the http-in user behind the msg when there is one (its Basic user
 * name only when `basicChecked`: see requestUser).
 */
export function nodeActor(node: Node, msg?: NodeMessage, basicChecked = false): Actor {
  const z = (node as Node & { z?: string }).z;
  const user = requestUser((msg as { req?: unknown } | undefined)?.req, basicChecked);
  return { node: node.id, nodeType: node.type, ...(z ? { flow: z } : {}), ...(user ? { user } : {}) };
}

/** Runs a node's instrument work with the node (and msg's user) recorded as the actor of every request it makes. */
export function asNodeActor<R>(node: Node, msg: NodeMessage | undefined, work: () => R, basicChecked = false): R {
  return withActor(nodeActor(node, msg, basicChecked), work);
}
