/**
 * Firmware errors exist only on the instrument's event socket (never in the pending error list), so a page or a node
 * that answers by id cannot find them by reading the instrument. Each lh-error-poll node that listens offers what
 * its memory holds open, per instrument; whoever answers asks here. A view onto the pollers' memory, not a copy:
 * nothing to expire, and it empties when the poll node closes.
 */
type Lookup = (id: string) => Record<string, unknown> | undefined;

const lookups = new Map<string, Set<Lookup>>();

/** An lh-error-poll node offers its open firmware errors for the instrument; the returned function withdraws them. */
export function offerFirmwareErrors(instrumentKey: string, lookup: Lookup): () => void {
  let set = lookups.get(instrumentKey);
  if (!set) lookups.set(instrumentKey, (set = new Set()));
  set.add(lookup);
  return () => {
    set.delete(lookup);
    if (set.size === 0 && lookups.get(instrumentKey) === set) lookups.delete(instrumentKey);
  };
}

/** The open firmware error with this id on the instrument, as lh-error-poll raised it (source 'firmware'), if any. */
export function openFirmwareError(instrumentKey: string, id: string): Record<string, unknown> | undefined {
  for (const lookup of lookups.get(instrumentKey) ?? []) {
    const found = lookup(id);
    if (found) return found;
  }
  return undefined;
}
