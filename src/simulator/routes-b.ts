/** Interface B (instrument control, HTTPS, under /api/vector/v3): the route table. */
import { type Route, Router } from './router';
import type { Services } from './services';

const V3 = '/api/vector/v3';

/** Interface B's router. */
export function interfaceBRouter(s: Services): Router {
  return new Router().addAll(instrumentRoutes(s));
}

export function instrumentRoutes(s: Services): Route[] {
  return [
    {
      method: 'POST',
      pattern: `${V3}/error-handler`,
      body: 'vector',
      auth: true,
      handle: (ctx) => ({ status: 200, body: s.instrument.register(ctx.body) }),
    },
    {
      method: 'DELETE',
      pattern: `${V3}/error-handler`,
      body: 'vector',
      auth: true,
      handle: (ctx) => ({ status: 200, body: s.instrument.unregister(ctx.body) }),
    },
    {
      method: 'GET',
      pattern: `${V3}/error-handler`,
      body: 'none',
      auth: true,
      handle: () => ({ status: 200, body: s.instrument.handlers.size > 0 }),
    },
    {
      method: 'GET',
      pattern: `${V3}/instrument-errors/unhandled`,
      body: 'none',
      auth: true,
      handle: () => ({ status: 200, body: s.instrument.unhandled() }),
    },
    {
      method: 'POST',
      pattern: `${V3}/instrument-errors/{uuid}/recovery`,
      body: 'vector',
      auth: true,
      handle: (ctx) => ({ status: 200, body: s.instrument.submit('recovery', ctx.params.uuid, ctx.body) }),
    },
    {
      method: 'POST',
      pattern: `${V3}/instrument-errors/{uuid}/action`,
      body: 'vector',
      auth: true,
      handle: (ctx) => ({ status: 200, body: s.instrument.submit('action', ctx.params.uuid, ctx.body) }),
    },
  ];
}
