/**
 * What `lh_coordination_failovers_total` counts: a lease this Node-RED took over from another replica (its holder
 * gone, its lease lapsed or released, or handed over when leases are spread). A lease this Node-RED takes back from
 * itself (Redis lost its data, a FLUSHALL, and the lease key with it: the renewal fails and the next acquisition is
 * this replica's again) or takes first (no holder seen) is no failover: no other replica held it.
 */
import type { RoleState } from './coordinator';

/** Whether another replica was seen holding the lease since this one last held it. */
export interface FailoverMemory {
  otherSince: boolean;
}

/**
 * The next memory, and whether `state` is a failover: this replica becoming holder after another replica was seen
 * holding the lease (a standby or lost state naming a holder other than `self`) since this one last held it.
 */
export function leaseFailover(
  memory: FailoverMemory,
  previous: RoleState['role'],
  state: RoleState,
  self: string,
): { memory: FailoverMemory; failover: boolean } {
  if (state.role === 'holder') {
    return { memory: { otherSince: false }, failover: previous !== 'holder' && memory.otherSince };
  }
  const other = state.holder !== undefined && state.holder !== self;
  return { memory: { otherSince: memory.otherSince || other }, failover: false };
}
