/* eslint-disable @typescript-eslint/no-explicit-any */
// The boundary with Node-RED's HTTP node app (an Express app): register a page's routes and remove them on close.
import type { IncomingMessage, ServerResponse } from 'http';

import { type Red } from '../shared/node-red';

export type PageRequest = IncomingMessage & { body?: unknown };
export type PageHandler = (req: PageRequest, res: ServerResponse) => void;
type Middleware = (req: any, res: any, next: (err?: unknown) => void) => void;

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean>; stack?: { handle?: unknown }[] };
  /** Express's matcher of the layer's path (parameters, letter case and trailing slash as Express sees them) */
  match?: (path: string) => boolean;
}

interface HttpNodeApp {
  get(path: string, ...handlers: Middleware[]): void;
  post(path: string, ...handlers: Middleware[]): void;
  _router?: { stack: RouteLayer[] };
  router?: { stack: RouteLayer[] };
}

function httpNode(RED: Red): HttpNodeApp | undefined {
  const app = (RED as unknown as { httpNode?: HttpNodeApp }).httpNode;
  return app && typeof app.get === 'function' ? app : undefined;
}

/** httpNodeMiddleware of settings.js, applied as the core http-in node applies it. */
function middleware(RED: Red): Middleware[] {
  const m = RED.settings.httpNodeMiddleware as unknown;
  if (typeof m === 'function') return [m as Middleware];
  if (Array.isArray(m)) return m.filter((f): f is Middleware => typeof f === 'function');
  return [];
}

/** One lh-answer-page node serving under a path; several may share a path (each answers the links it signed). */
export interface PageEndpoint {
  /** true when the link token carries this node's signature (whatever else is wrong with it) */
  owns(token: unknown): boolean;
  /**
   * true while the node cannot tell yet whether it signed a link (its key shared in Redis is still awaited): it takes
   * the links no node on the path owns, never one another node signed
   */
  awaiting(): boolean;
  /** settles once the node can tell whether it signed a link (its shared key loaded, or the load failed) */
  ready(): Promise<unknown>;
  get(req: PageRequest, res: ServerResponse): void;
  post(req: PageRequest, res: ServerResponse, form: URLSearchParams): void;
}

interface Mounted {
  endpoints: Set<PageEndpoint>;
  unmount(): void;
}

const mounted = new WeakMap<HttpNodeApp, Map<string, Mounted>>();
/** Every route handler of every page: what is not in here on a page's path belongs to someone else. */
const ourHandlers = new WeakSet<object>();

/**
 * Another GET or POST route (a user's `http in` node, another package) that answers requests for `path`, or
 * undefined. Matched as Express matches (`/answer/:id`, `/ANSWER`, `/answer/` all take `/answer`), so whichever was
 * registered first would silently shadow the other.
 */
export function routeClash(RED: Red, path: string): string | undefined {
  const app = httpNode(RED);
  const stack = app && (app._router ?? app.router)?.stack;
  if (!stack) return undefined;
  for (const layer of stack) {
    const route = layer.route;
    if (!route || !(route.methods.get || route.methods.post || route.methods._all)) continue;
    if ((route.stack ?? []).some((l) => typeof l.handle === 'function' && ourHandlers.has(l.handle))) continue;
    let matches = false;
    try {
      matches = typeof layer.match === 'function' ? layer.match(path) : route.path === path;
    } catch {
      matches = route.path === path;
    }
    if (matches) {
      const methods = Object.keys(route.methods)
        .filter((m) => route.methods[m])
        .map((m) => (m === '_all' ? 'ALL' : m.toUpperCase()));
      return `${methods.join('/')} ${route.path}`;
    }
  }
  return undefined;
}

/**
 * The headers CORS middleware in front of the HTTP node app adds (the editor app's `Access-Control-Allow-Origin: *`
 * when httpAdminRoot and httpNodeRoot share a server): the page is for people with the link, never for other sites.
 */
const CORS_HEADERS = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Credentials',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Headers',
  'Access-Control-Expose-Headers',
  'Access-Control-Max-Age',
];

export function withoutCors(res: ServerResponse): void {
  if (res.headersSent) return;
  for (const name of CORS_HEADERS) res.removeHeader(name);
}

/** Removes the routes whose handlers are `ours`; other routes on the same path (a user's http in node) stay. */
function unmountRoutes(app: HttpNodeApp, ours: ReadonlySet<unknown>): void {
  const stack = (app._router ?? app.router)?.stack;
  if (!stack) return;
  for (let i = stack.length - 1; i >= 0; i--) {
    const layers = stack[i].route?.stack ?? [];
    if (layers.some((layer) => ours.has(layer.handle))) stack.splice(i, 1);
  }
}

/**
 * Serves GET and POST of `path` for `endpoint`: the request goes to the node whose signature its link carries, a
 * link nobody signed gets `refuse`. Returns the function that removes the endpoint (and the routes with the last
 * one); false when Node-RED serves no HTTP nodes.
 */
export function servePage(
  RED: Red,
  path: string,
  endpoint: PageEndpoint,
  refuse: (res: ServerResponse, why?: 'too-large' | 'cross-site' | 'unavailable', token?: unknown) => void,
): (() => void) | false {
  const app = httpNode(RED);
  if (!app) return false;
  let paths = mounted.get(app);
  if (!paths) mounted.set(app, (paths = new Map()));
  let here = paths.get(path);
  if (!here) {
    const endpoints = new Set<PageEndpoint>();
    /**
     * The page that signed the link; while pages wait for their keys shared in Redis, the one waiting (it checks the
     * link once its key is there). Several waiting (a fleet on the default path, after a restart while Redis was
     * away): the first took the others' links and, its key loaded, called them not valid; now each loads its key
     * first, and while none can (Redis still away) the request is told to try again, by no page in particular.
     */
    const owner = async (token: unknown): Promise<PageEndpoint | 'unavailable' | undefined> => {
      const signer = (): PageEndpoint | undefined => [...endpoints].find((e) => e.owns(token));
      const waiting = [...endpoints].filter((e) => e.awaiting());
      const found = signer();
      if (found || waiting.length <= 1) return found ?? waiting[0];
      await Promise.allSettled(waiting.map((e) => e.ready()));
      return signer() ?? ([...endpoints].some((e) => e.awaiting()) ? 'unavailable' : undefined);
    };
    const answer = (
      found: PageEndpoint | 'unavailable' | undefined,
      res: ServerResponse,
      token: unknown,
    ): PageEndpoint | undefined => {
      if (found === 'unavailable') refuse(res, 'unavailable');
      else if (!found) refuse(res, undefined, token);
      return found === 'unavailable' ? undefined : found;
    };
    const before = middleware(RED);
    const onGet = (req: PageRequest, res: ServerResponse): void => {
      withoutCors(res);
      const token = queryParam(req, 't');
      owner(token)
        .then((found) => answer(found, res, token)?.get(req, res))
        .catch(() => refuse(res));
    };
    const onPost = (req: PageRequest, res: ServerResponse): void => {
      withoutCors(res);
      if (postedFromAnotherSite(req)) {
        req.resume();
        return refuse(res, 'cross-site');
      }
      readForm(req)
        .then(
          async (form) => {
            const token = form.get('t') ?? queryParam(req, 't');
            answer(await owner(token), res, token)?.post(req, res, form);
          },
          (err: unknown) => refuse(res, err instanceof FormTooLarge ? 'too-large' : undefined),
        )
        // never an unhandled rejection (red.js exits on one): whatever threw, the request gets the plain refusal
        .catch(() => refuse(res));
    };
    ourHandlers.add(onGet);
    ourHandlers.add(onPost);
    app.get(path, ...before, onGet);
    app.post(path, ...before, onPost);
    const known = paths;
    here = { endpoints, unmount: () => (unmountRoutes(app, new Set<unknown>([onGet, onPost])), known.delete(path)) };
    paths.set(path, here);
  }
  const entry = here;
  entry.endpoints.add(endpoint);
  return () => {
    entry.endpoints.delete(endpoint);
    if (entry.endpoints.size === 0) entry.unmount();
  };
}

/**
 * Whether the browser says a POST comes from a page of another site (`Sec-Fetch-Site` other than `same-origin`, or
 * `none` for one the person made themselves): the page's own forms post from the page. Whoever can open a link can
 * put its form token in a form on a site of theirs; a person pressing its button would answer with their own browser's
 * cookies and HTTP Basic credentials (httpNodeAuth), in their name. `Origin` cannot tell: the page's own posts carry
 * `Origin: null` (its Referrer-Policy is no-referrer). A post with no such header (curl, a script) is judged as before.
 */
export function postedFromAnotherSite(req: IncomingMessage): boolean {
  const header = req.headers['sec-fetch-site'];
  const site = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  return site !== undefined && site !== '' && site !== 'same-origin' && site !== 'none';
}

export const MAX_FORM_BYTES = 16 * 1024;

export class FormTooLarge extends Error {
  constructor() {
    super(`the form is larger than ${MAX_FORM_BYTES / 1024} KiB`);
  }
}

/** The size of a body a parser in front (the editor app's, 5 MiB) already read: declared, or as sent again. */
export function parsedFormBytes(req: PageRequest): number {
  const declared = Number(req.headers['content-length']);
  const body = req.body;
  const resent =
    typeof body === 'string'
      ? Buffer.byteLength(body)
      : body && typeof body === 'object' && !Buffer.isBuffer(body)
        ? Buffer.byteLength(new URLSearchParams(flatFields(body as Record<string, unknown>)).toString())
        : Buffer.isBuffer(body)
          ? body.length
          : 0;
  return Math.max(Number.isFinite(declared) ? declared : 0, resent);
}

function flatFields(body: Record<string, unknown>): [string, string][] {
  return Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]);
}

/**
 * The form fields of a POST (application/x-www-form-urlencoded), at most MAX_FORM_BYTES: read here (httpNode has no
 * body parser of its own), or taken from a parser in front whose own limit is far larger, the cap applied all the same.
 */
export function readForm(req: PageRequest): Promise<URLSearchParams> {
  if (req.body !== undefined && req.body !== null && parsedFormBytes(req) > MAX_FORM_BYTES) {
    return Promise.reject(new FormTooLarge());
  }
  if (req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body)) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.body as Record<string, unknown>)) if (typeof v === 'string') params.set(k, v);
    return Promise.resolve(params);
  }
  if (typeof req.body === 'string') return Promise.resolve(new URLSearchParams(req.body));
  if (Number(req.headers['content-length']) > MAX_FORM_BYTES) {
    req.resume();
    return Promise.reject(new FormTooLarge());
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_FORM_BYTES) {
        reject(new FormTooLarge());
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** The user name of HTTP basic auth (httpNodeAuth), never the password. */
export function basicAuthUser(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon >= 0 ? decoded.slice(0, colon) : '';
  return user !== '' ? user : undefined;
}

/**
 * A parameter of the request's query. Read from the text between `?` and a `#`, never by parsing the whole target
 * as a URL: Node's HTTP parser and Express's router accept targets the URL parser refuses (`http://:99999/lh-answer`,
 * an absolute form whose port is out of range, is `/lh-answer` to the router), and a throw here took Node-RED down.
 */
export function queryParam(req: IncomingMessage, name: string): string | undefined {
  const whole = typeof req.url === 'string' ? req.url : '';
  const hash = whole.indexOf('#');
  const target = hash < 0 ? whole : whole.slice(0, hash);
  const start = target.indexOf('?');
  if (start < 0) return undefined;
  // the query alone behind a fixed base, read by the URL parser: its query state takes any text. Not
  // `new URLSearchParams(query)`: Node's (20, 22) percent-decoding there garbles a non-ASCII letter after a `%`
  // that starts no escape and a valid escape (`%zz%41ü` reads `A\uFFFD`), where the URL parser reads `%zzAü`
  try {
    return new URL(`http://x/?${target.slice(start + 1)}`).searchParams.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}
