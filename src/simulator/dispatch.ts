/**
 * Answering one A or B request from its route table: 404/405, the bearer check, the media type, the JSON body,
 * then the route's handler; whatever it throws becomes a problem answer.
 */
import type { IncomingHttpHeaders } from 'http';

import type { AuthService } from './auth';
import type { BodyKind } from './media-types';
import { checkMediaType } from './media-types';
import { HttpProblem, problem, unauthorized } from './problem';
import type { Reply, RequestContext, Router } from './router';
import type { Api } from './servers';
import type { LoggedRequest } from './types';

export interface DispatchContext {
  /** the observed instrument's leniency (media types, token-less status reads) */
  lenient: boolean;
  routers: Record<Api, Router>;
  auth: AuthService;
  /** false: interface A answers without a token (user management off) */
  userManagement(): boolean;
  /** A: the answer to a firmware error, when the request answers one */
  firmwareAnswer(ctx: RequestContext): Reply | undefined;
}

/**
 * Lenient (the default): a GET of A without an Authorization header answers, as reads do on hardware (the tested tools
 * log in only after a 401; observed-instrument.md: "Reads work without a token on real instruments"). Not
 * `authenticate/*` (check-authentication reports the caller's session), and only without the header: an expired or
 * bad token is still a 401, so renewals stay tested. Writes and interface B always want a token. Strict: every
 * operation wants one, as interfaces.md says.
 */
export function tokenlessRead(lenient: boolean, api: Api, method: string, path: string, authorization?: string): boolean {
  return lenient && api === 'A' && method === 'GET' && !authorization && !path.toLowerCase().startsWith('/api/v1/authenticate');
}

/** The request body a route takes: undefined for none, else JSON (a 400 for an empty or broken one). */
export function readJsonBody(kind: BodyKind, raw: string): unknown {
  if (kind === 'none') return undefined;
  if (raw.trim() === '')
    throw new HttpProblem(400, 'A non-empty request body is required.', {
      errors: { $: ['A non-empty request body is required.'] },
    });
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new HttpProblem(400, `The request body is not valid JSON: ${(err as Error).message}`, {
      errors: { $: ['The JSON value could not be converted.'] },
    });
  }
}

export function problemReply(p: HttpProblem): Reply {
  return { status: p.status, body: p.body, headers: p.headers };
}

export function dispatch(c: DispatchContext, api: Api, entry: LoggedRequest, headers: IncomingHttpHeaders, raw: string): Reply {
  const method = entry.method;
  const match = c.routers[api].match(method, entry.path);
  if (match.kind === 'not-found') return problemReply(new HttpProblem(404, `No resource at ${entry.path}.`));
  if (match.kind === 'method-not-allowed') {
    return problemReply(
      new HttpProblem(405, `${method} is not allowed on ${entry.path}.`, { headers: { Allow: match.allow.join(', ') } }),
    );
  }
  try {
    const { route, params } = match;
    const principal = c.auth.principalOf(entry.authorization, api);
    const open = api === 'A' && !c.userManagement();
    const tokenless = tokenlessRead(c.lenient, api, method, entry.path, entry.authorization);
    if (route.auth && !principal && !open && !tokenless) throw unauthorized();
    checkMediaType(route.body, entry.contentType, api === 'A' && c.lenient);
    const body = readJsonBody(route.body, raw);
    const ctx: RequestContext = { api, method, path: entry.path, query: entry.query, params, headers, body, principal };
    if (api === 'A') {
      const firmwareAnswer = c.firmwareAnswer(ctx);
      if (firmwareAnswer) return firmwareAnswer;
    }
    return route.handle(ctx);
  } catch (err) {
    if (err instanceof HttpProblem) return problemReply(err);
    return { status: 500, body: problem(500, err instanceof Error ? err.message : String(err)) };
  }
}
