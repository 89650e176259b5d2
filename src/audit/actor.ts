import { AsyncLocalStorage } from 'async_hooks';

import { type Actor } from './record';

const storage = new AsyncLocalStorage<Actor>();

/**
 * Runs `work` with `actor` as the one responsible for every instrument request it makes, however deep in the client
 * the request is sent (the audit hook reads it back). Nested calls add to the outer actor.
 */
export function withActor<R>(actor: Actor, work: () => R): R {
  const outer = storage.getStore();
  return storage.run(outer ? { ...outer, ...actor } : actor, work);
}

/** Who is acting now, as far as anyone said. */
export function currentActor(): Actor | undefined {
  return storage.getStore();
}
