/* eslint-disable @typescript-eslint/no-explicit-any */
// The boundary with Node-RED's HTTP node app (an Express app): register a page's routes and remove them on close.
import type { IncomingMessage, ServerResponse } from 'http';
import { Red } from '../shared/node-red';

export type PageRequest = IncomingMessage & { body?: unknown };
export type PageHandler = (req: PageRequest, res: ServerResponse) => void;
type Middleware = (req: any, res: any, next: (err?: unknown) => void) => void;

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean>; stack?: { handle?: unknown }[] };
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
  get(req: PageRequest, res: ServerResponse): void;
  post(req: PageRequest, res: ServerResponse, form: URLSearchParams): void;
}

interface Mounted {
  endpoints: Set<PageEndpoint>;
  unmount(): void;
}

const mounted = new WeakMap<HttpNodeApp, Map<string, Mounted>>();

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
export function servePage(RED: Red, path: string, endpoint: PageEndpoint, refuse: (res: ServerResponse) => void): (() => void) | false {
  const app = httpNode(RED);
  if (!app) return false;
  let paths = mounted.get(app);
  if (!paths) mounted.set(app, (paths = new Map()));
  let here = paths.get(path);
  if (!here) {
    const endpoints = new Set<PageEndpoint>();
    const owner = (token: unknown): PageEndpoint | undefined => [...endpoints].find((e) => e.owns(token));
    const before = middleware(RED);
    const onGet = (req: PageRequest, res: ServerResponse): void => {
      const found = owner(queryParam(req, 't'));
      if (found) found.get(req, res);
      else refuse(res);
    };
    const onPost = (req: PageRequest, res: ServerResponse): void => {
      readForm(req).then(
        (form) => {
          const found = owner(form.get('t') ?? queryParam(req, 't'));
          if (found) found.post(req, res, form);
          else refuse(res);
        },
        () => refuse(res),
      );
    };
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

const MAX_FORM_BYTES = 16 * 1024;

/** The form fields of a POST (application/x-www-form-urlencoded), read here: httpNode has no body parser of its own. */
export function readForm(req: PageRequest): Promise<URLSearchParams> {
  if (req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body)) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.body as Record<string, unknown>)) if (typeof v === 'string') params.set(k, v);
    return Promise.resolve(params);
  }
  if (typeof req.body === 'string') return Promise.resolve(new URLSearchParams(req.body));
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_FORM_BYTES) {
        reject(new Error('form too large'));
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

export function queryParam(req: IncomingMessage, name: string): string | undefined {
  const url = new URL(req.url ?? '/', 'http://x');
  return url.searchParams.get(name) ?? undefined;
}
