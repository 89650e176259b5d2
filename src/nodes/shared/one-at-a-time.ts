/**
 * Work on one thing of an instrument, one at a time in this process: a read-modify-write (a settings merge, a routine
 * update, an apply of a plan) waits for the one before it on the same key to end. Pure.
 */

/**
 * Runs `work` after every earlier work under `key` in `queue` (the tail of each key's queue) has ended, fulfilled or
 * not; the key leaves the map once its queue is empty.
 */
export async function oneAtATime<R>(queue: Map<string, Promise<unknown>>, key: string, work: () => Promise<R>): Promise<R> {
  const before = queue.get(key) ?? Promise.resolve();
  const mine = before.then(work, work);
  const tail = mine.catch(() => undefined);
  queue.set(key, tail);
  try {
    return await mine;
  } finally {
    if (queue.get(key) === tail) queue.delete(key);
  }
}
