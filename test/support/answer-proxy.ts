/**
 * A proxy in front of the simulator that reads each whole answer before it goes on, so a test can give another one in
 * its place: how a real instrument may frame what the simulator answers (a bare word, keys in another order or letter
 * case, a body too large, a redirect). The request reaches the simulator first, as it would reach the instrument.
 */
import http from 'http';

import { closeLocal, listenLocal } from './local-server';

/** The simulator's answer, read whole. */
export interface UpstreamAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Answers `res` in the simulator's place and returns true; false: the simulator's answer goes on as it is. */
export type AnswerRewrite = (req: http.IncomingMessage, up: UpstreamAnswer, res: http.ServerResponse) => boolean;

/** The request's path without its query. */
export function pathOf(req: http.IncomingMessage): string {
  return (req.url ?? '').split('?')[0];
}

/** Answers with `body` and its length (a length or chunking the headers carried from upstream is dropped). */
export function answerWith(
  res: http.ServerResponse,
  status: number,
  headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders,
  body: string | Buffer,
): void {
  const out: http.OutgoingHttpHeaders = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  delete out['transfer-encoding'];
  res.writeHead(status, out);
  res.end(body);
}

/**
 * Mocha hooks: the proxy to `baseUrl()` (read per request: the simulator may start in a later hook) listens before
 * the suite and closes after it; `url` is its address once it listens.
 */
export function useAnswerProxy(baseUrl: () => string, rewrite: AnswerRewrite): { readonly url: string } {
  let proxy: http.Server | undefined;
  let url = '';
  before(async function () {
    proxy = http.createServer((req, res) => {
      const upstream = http.request(`${baseUrl()}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const answer = { status: up.statusCode ?? 502, headers: up.headers, body: Buffer.concat(chunks) };
          if (rewrite(req, answer, res)) return;
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        });
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    url = await listenLocal(proxy);
  });
  after(async function () {
    if (proxy) await closeLocal(proxy);
  });
  return {
    get url() {
      return url;
    },
  };
}
