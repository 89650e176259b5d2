/** A small path router: literal segments and `{name}` parameters, first match wins. */
import type { Principal } from './auth';
import type { BodyKind } from './media-types';

export interface RequestContext {
  api: 'A' | 'B';
  method: string;
  /** without the A prefix */
  path: string;
  query: Record<string, string>;
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** parsed JSON body, undefined when the endpoint takes none */
  body: unknown;
  principal?: Principal;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** destroy the connection instead of answering (the request was received, the client sees a reset) */
  resetConnection?: boolean;
}

export interface Route {
  method: string;
  pattern: string;
  body: BodyKind;
  /** false: no bearer needed (login-type operations) */
  auth: boolean;
  handle(ctx: RequestContext): Reply;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

export class Router {
  private readonly routes: CompiledRoute[] = [];

  /** The routes, in the order they match. */
  get list(): Route[] {
    return this.routes.map((r) => r.route);
  }

  add(route: Route): this {
    this.routes.push({ route, segments: split(route.pattern) });
    return this;
  }

  addAll(routes: Route[]): this {
    for (const r of routes) this.add(r);
    return this;
  }

  match(method: string, path: string): RouteMatch {
    const parts = split(path);
    const allow: string[] = [];
    for (const { route, segments } of this.routes) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method === method) return { kind: 'found', route, params };
      allow.push(route.method);
    }
    return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith('{') && p.endsWith('}')) {
      let value: string;
      try {
        value = decodeURIComponent(parts[i]);
      } catch {
        return undefined;
      }
      params[p.slice(1, -1)] = value;
    } else if (p.toLowerCase() !== parts[i].toLowerCase()) {
      return undefined;
    }
  }
  return params;
}
