/**
 * What the simulator took from the package, read from its request log the same way in every test: the runtime-error
 * answers (`PUT errors/runtime`) and B's recovery submissions (`POST instrument-errors/{id}/…`).
 */
import type { LoggedRequest } from '../../src/simulator/types';

interface Logged {
  requests: LoggedRequest[];
}

type Body = Record<string, unknown>;

/** The bodies of the runtime-error answers the simulator took, in order (those for error `id` only, when given). */
export function answersSent<T = Body>(sim: Logged, id?: string): T[] {
  return sim.requests
    .filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime')
    .filter((r) => id === undefined || String((r.body as Body | undefined)?.id) === id)
    .map((r) => r.body as T);
}

/** B's recovery submissions (solution or action) the simulator took, in order. */
export function recoverySubmissions(sim: Logged): LoggedRequest[] {
  return sim.requests.filter(
    (r) => r.api === 'B' && r.method === 'POST' && r.path.startsWith('/api/vector/v3/instrument-errors/'),
  );
}
