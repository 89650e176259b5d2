import http from 'http';
import https from 'https';
import { Readable, Transform } from 'stream';
import zlib from 'zlib';

/**
 * One HTTP exchange over Node's own http/https with a keep-alive agent: the request written in one go, the answer's
 * body collected (and decoded, should a server compress it unasked) up to a cap. What the transport needs and nothing
 * more: no redirects, no proxy, no compression asked for (the answers are small JSON on a lab network). It replaced
 * axios: axios's per-request config merging and header objects were about a fifth of a request's CPU in the lh-steps
 * path (profiled), more than the whole gap the per-msg target allows.
 */
export interface ExchangeRequest {
  /** Absolute http: or https: URL (path already encoded); `query` is appended to it. */
  url: string;
  query?: Record<string, string>;
  method: string;
  headers: Record<string, string>;
  /** Sent as UTF-8 with its Content-Length. */
  body?: string;
  agent: http.Agent;
  /** An answer whose body is larger than this ends the exchange with BodyTooLarge. */
  maxBytes: number;
}

export interface ExchangeAnswer {
  status: number;
  statusText: string;
  /** Names in lower case, as Node gives them. */
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The answer's body passed the cap: nothing of it is used. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer's body is larger than ${limit} bytes`);
  }
}

/** The connection closed before the whole answer arrived. */
export class AnswerCutOff extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the connection closed before the whole answer arrived');
  }
}

/**
 * A query value as it goes into the URL: encodeURIComponent, keeping `:`, `$` and `,` and a space as `+` (the
 * spelling the client sent through axios, kept so that no request changes on the wire).
 */
export function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ':').replace(/%24/g, '$').replace(/%2C/gi, ',').replace(/%20/g, '+');
}

/** The path and query of `url` with `query` appended. */
export function pathWithQuery(url: URL, query: Record<string, string> | undefined): string {
  let path = url.pathname + url.search;
  if (!query) return path;
  const keys = Object.keys(query);
  if (keys.length === 0) return path;
  path += url.search === '' ? '?' : '&';
  path += keys.map((k) => `${encodeQueryValue(k)}=${encodeQueryValue(query[k])}`).join('&');
  return path;
}

/**
 * Sends the request; `hold` gets the ClientRequest at once (so that a deadline or a close can destroy it). Resolves
 * with the whole answer, rejects with the socket's error (its code kept), AnswerCutOff or BodyTooLarge.
 */
export function exchange(request: ExchangeRequest, hold: (req: http.ClientRequest) => void): Promise<ExchangeAnswer> {
  const url = new URL(request.url);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = { ...request.headers };
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  if (body) headers['Content-Length'] = String(body.length);
  return new Promise<ExchangeAnswer>((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        protocol: url.protocol,
        // an IPv6 literal without its brackets, as Node's net wants it
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (secure ? 443 : 80),
        path: pathWithQuery(url, request.query),
        method: request.method,
        headers,
        agent: request.agent,
      },
      (res) => collect(res, request.maxBytes, req).then(resolve, reject),
    );
    req.on('error', reject);
    hold(req);
    req.end(body);
  });
}

/** A decoder for a compressed answer (no one asks for one, but a server may send it anyway), or undefined. */
function decoderFor(res: http.IncomingMessage): Transform | undefined {
  if (res.statusCode === 204 || res.statusCode === 304) return undefined;
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate' || encoding === 'compress') {
    return zlib.createUnzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  }
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return undefined;
}

/** The answer's body, decoded; the cap counts decoded bytes (a small compressed answer may inflate past it). */
function collect(res: http.IncomingMessage, maxBytes: number, req: http.ClientRequest): Promise<ExchangeAnswer> {
  return new Promise<ExchangeAnswer>((resolve, reject) => {
    const decoder = decoderFor(res);
    const declared = Number(res.headers['content-length']);
    if (!decoder && Number.isFinite(declared) && declared > maxBytes) {
      req.destroy();
      reject(new BodyTooLarge(maxBytes));
      return;
    }
    const body: Readable = decoder ? res.pipe(decoder) : res;
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        decoder?.destroy();
        req.destroy();
        reject(new BodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    // a body that does not decode: its socket is let go of too (piping stops on the error, and an answer left unread
    // would hold its keep-alive socket, and with it a place under maxSockets, for as long as the server keeps it open)
    if (decoder)
      decoder.on('error', (err) => {
        req.destroy();
        reject(err);
      });
    res.on('error', reject);
    body.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? '',
        headers: res.headers,
        body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size),
      }),
    );
    res.on('close', () => {
      if (!res.complete) reject(new AnswerCutOff());
    });
  });
}
