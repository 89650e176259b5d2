/**
 * Whether the answer being given is automatic (a policy's rule or default) rather than a person's: with coordination
 * an automatic answer is claimed under the lease holder's fencing token, so a replica that lost the instrument (paused
 * past its lease) cannot send one; a person's answer (a page POSTed to any replica) needs no lease.
 */
import { AsyncLocalStorage } from 'async_hooks';

const storage = new AsyncLocalStorage<true>();

/** Runs `work` as automatic: every answer it gives is claimed under the lease. */
export function asAutomatic<R>(work: () => R): R {
  return storage.run(true, work);
}

export function isAutomatic(): boolean {
  return storage.getStore() === true;
}
