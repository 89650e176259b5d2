/** The request log (GET /sim/requests): what each A and B request looked like, bounded. */
import type { IncomingMessage } from 'http';
import type { TLSSocket } from 'tls';

import { headerValue, parseLoose, queryOf } from './http-io';
import type { Api } from './servers';
import type { LoggedRequest } from './types';

export const MAX_LOGGED_REQUESTS = 10_000;

export class RequestLog {
  readonly entries: LoggedRequest[] = [];
  private readonly listeners = new Set<(entry: LoggedRequest) => void>();

  /** Called with each request as it is logged, before it is served (a test switches faults on for that request). */
  onRecord(listener: (entry: LoggedRequest) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  record(entry: LoggedRequest): void {
    for (const listener of [...this.listeners]) listener(entry);
    this.entries.push(entry);
    if (this.entries.length > MAX_LOGGED_REQUESTS) this.entries.splice(0, this.entries.length - MAX_LOGGED_REQUESTS);
  }

  clear(): void {
    this.entries.length = 0;
  }
}

/** Whether an A path lies under the service prefix (B has none). */
export function inPrefix(api: Api, prefix: string, pathname: string): boolean {
  return api === 'B' || prefix === '' || pathname === prefix || pathname.startsWith(`${prefix}/`);
}

/** The log entry of a request (status 0 until answered); the A path without the prefix when under it. */
export function logEntry(api: Api, req: IncomingMessage, url: URL, prefix: string, raw: string): LoggedRequest {
  return {
    api,
    method: (req.method ?? 'GET').toUpperCase(),
    path: api === 'A' && inPrefix(api, prefix, url.pathname) ? url.pathname.slice(prefix.length) || '/' : url.pathname,
    query: queryOf(url),
    contentType: headerValue(req, 'content-type'),
    authorization: headerValue(req, 'authorization'),
    body: parseLoose(raw),
    status: 0,
    time: Date.now(),
    host: headerValue(req, 'host'),
    remotePort: req.socket.remotePort,
    ...tlsDetails(req),
  };
}

function tlsDetails(req: IncomingMessage): Pick<LoggedRequest, 'clientCertificate' | 'alpnProtocol'> {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return {};
  const out: Pick<LoggedRequest, 'clientCertificate' | 'alpnProtocol'> = {};
  const cn = socket.getPeerCertificate().subject?.CN;
  if (typeof cn === 'string' && cn !== '') out.clientCertificate = cn;
  if (typeof socket.alpnProtocol === 'string') out.alpnProtocol = socket.alpnProtocol;
  return out;
}
