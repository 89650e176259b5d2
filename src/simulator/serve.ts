/**
 * One request's way through the simulator: the body is read, /sim goes to the control API, everything else is
 * logged, meets the active faults (latency, reset, timeout, status, slow login rejections, trickled answers) and is
 * answered from the interface's route table with the interface's media types.
 */
import type { IncomingMessage, ServerResponse } from 'http';

import type { ControlReply } from './control-api';
import { problemReply } from './dispatch';
import { DEFAULT_TIMEOUT_HOLD_MS, rollFault } from './faults';
import { BodyTooLarge, parseLoose, readBody, send } from './http-io';
import { A_RESPONSE_TYPE, B_MEDIA_TYPE, B_PROBLEM_TYPE, PROBLEM_TYPE } from './media-types';
import { htmlErrorPage, HttpProblem, problem } from './problem';
import { inPrefix, logEntry, type RequestLog } from './request-log';
import type { Reply } from './router';
import type { Api } from './servers';
import type { TimerSet } from './timers';
import type { Faults, LoggedRequest } from './types';

export interface ServeContext {
  prefix: string;
  timers: TimerSet;
  log: RequestLog;
  running(): boolean;
  faults(): Faults;
  control(method: string, path: string, body: unknown): ControlReply;
  dispatch(api: Api, entry: LoggedRequest, req: IncomingMessage, raw: string): Reply;
  /** pushes on instincterrors what changed in the runtime errors */
  syncErrorPushes(): void;
}

/** The content type of an answer: each interface has its own for results and for problems. */
export function replyType(api: Api, status: number): string {
  const isProblem = status >= 400;
  if (api === 'A') return isProblem ? PROBLEM_TYPE : A_RESPONSE_TYPE;
  return isProblem ? B_PROBLEM_TYPE : B_MEDIA_TYPE;
}

/** Whether a rejection is of credentials (login or renewal), which `loginRejectionDelayMs` slows down. */
export function isCredentialRejection(api: Api, method: string, path: string, status: number): boolean {
  const credentialPath = api === 'A' && method === 'POST' && /^\/api\/v1\/authenticate(\/renew-token)?$/.test(path);
  return credentialPath && status >= 400 && status < 500;
}

export async function serve(c: ServeContext, api: Api, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://simulator.invalid');
  const method = (req.method ?? 'GET').toUpperCase();
  let raw: string;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (err instanceof BodyTooLarge) send(res, 413, problem(413, err.message), PROBLEM_TYPE, { Connection: 'close' });
    else req.socket.destroy();
    return;
  }
  if (api === 'A' && (url.pathname === '/sim' || url.pathname.startsWith('/sim/'))) {
    const reply = c.control(method, url.pathname, parseLoose(raw));
    send(res, reply.status, reply.body, A_RESPONSE_TYPE);
    if (reply.after) res.once('finish', reply.after);
    c.syncErrorPushes();
    return;
  }
  const entry = logEntry(api, req, url, c.prefix, raw);
  c.log.record(entry);

  const faults = c.faults();
  const generation = c.timers.generation;
  const gone = (): boolean => !c.running() || generation !== c.timers.generation || res.destroyed;
  if (faults.latencyMs) await c.timers.delay(faults.latencyMs);
  if (gone()) return;
  const outcome = rollFault(faults, Math.random, req.method);
  if (outcome === 'reset') {
    req.socket.destroy();
    return;
  }
  if (outcome === 'timeout') {
    // never answered: the socket is released at stop()/restart() or after timeoutHoldMs
    c.timers.schedule(faults.timeoutHoldMs ?? DEFAULT_TIMEOUT_HOLD_MS, () => req.socket.destroy());
    return;
  }
  if (outcome === 'status') {
    const status = faults.statusCode ?? 503;
    entry.status = status;
    if (faults.htmlErrors) send(res, status, htmlErrorPage(status), 'text/html; charset=utf-8');
    else send(res, status, problem(status, `Fault injected by the simulator (HTTP ${status}).`), replyType(api, status));
    return;
  }

  const reply = inPrefix(api, c.prefix, url.pathname)
    ? c.dispatch(api, entry, req, raw)
    : problemReply(new HttpProblem(404, `No resource at ${url.pathname}; the service lives under ${c.prefix}.`));
  if (reply.resetConnection) {
    req.socket.destroy();
    return;
  }
  entry.status = reply.status;
  const type = replyType(api, reply.status);
  if (faults.loginRejectionDelayMs && isCredentialRejection(api, method, entry.path, reply.status)) {
    await c.timers.delay(faults.loginRejectionDelayMs);
    if (gone()) return;
  }
  if (faults.trickleMs) trickle(c.timers, res, reply.status, JSON.stringify(reply.body ?? ''), type, faults.trickleMs);
  else send(res, reply.status, reply.body, reply.headers?.['Content-Type'] ?? type, reply.headers);
  if (api === 'A' && method !== 'GET') c.syncErrorPushes();
}

/** Sends the answer's body one byte at a time, `everyMs` apart. */
function trickle(timers: TimerSet, res: ServerResponse, status: number, text: string, type: string, everyMs: number): void {
  const bytes = Buffer.from(text);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i >= bytes.length) return void res.end();
    res.write(bytes.subarray(i, ++i));
    timers.schedule(everyMs, next);
  };
  next();
}
