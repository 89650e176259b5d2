/**
 * Firmware errors exist only on the instrument's event socket (never in the pending error list), so a page or a node
 * that answers by id cannot find them by reading the instrument. Each lh-error-poll node that listens offers what
 * its memory holds open, in the instrument's home; whoever answers asks here. A view onto the pollers' memory, not a
 * copy: nothing to expire, and it empties when the poll node closes.
 */
import { findHome, homeOf, slot } from '../../instrument';

type Lookup = (id: string) => Record<string, unknown> | undefined;

/** The lookups offered for one instrument (its home's slot). */
const LOOKUPS = slot('open-firmware-errors', () => new Set<Lookup>());

/** An lh-error-poll node offers its open firmware errors for the instrument; the returned function withdraws them. */
export function offerFirmwareErrors(instrumentKey: string, lookup: Lookup): () => void {
  const set = homeOf(instrumentKey).slot(LOOKUPS);
  set.add(lookup);
  return () => void set.delete(lookup);
}

/** The open firmware error with this id on the instrument, as lh-error-poll raised it (source 'firmware'), if any. */
export function openFirmwareError(instrumentKey: string, id: string): Record<string, unknown> | undefined {
  const home = findHome(instrumentKey);
  for (const lookup of home?.has(LOOKUPS) ? home.slot(LOOKUPS) : []) {
    const found = lookup(id);
    if (found) return found;
  }
  return undefined;
}
