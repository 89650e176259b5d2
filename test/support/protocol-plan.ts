/**
 * A plan as lh-protocol's `plan` operation makes it (tests): the fewest changes from the instrument's protocol to the
 * desired one, its base the digest of the protocol as read, its target the digest of the result.
 */
import { type DesiredStep, exportDigest, type ProtocolExport } from '../../src/nodes/lh-protocol/export-format';
import { makePlan, type Plan } from '../../src/nodes/lh-protocol/plan';
import { planChanges, type PlannedChanges } from '../../src/nodes/lh-protocol/plan-make';

export function planned(
  current: ProtocolExport,
  desired: readonly DesiredStep[],
  at: { protocolId: number; instrument: string; id?: string },
): PlannedChanges & { plan: Plan } {
  const made = planChanges(current, desired);
  const plan = makePlan({
    id: at.id ?? `p${at.protocolId}`,
    protocolId: at.protocolId,
    protocolName: current.name,
    instrument: at.instrument,
    base: exportDigest(current),
    target: exportDigest(made.target),
    changes: made.changes,
  });
  return { ...made, plan };
}
