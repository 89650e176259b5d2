/**
 * The one setting of an older flow whose meaning changed in 0.4: *Remember* (issue 32). Nodes saved before version 3
 * had it off (the dialog's default then, or no such property); the migration turns it on, so pending errors are no
 * longer reported again after a restart. Pure: the node says so at start, the dialog beside the box, until the node
 * is saved again (with Remember ticked or not, at version 3 it is the user's choice and nothing more is said).
 */
import { savedVersion } from '../../contract/migration-steps';

/** Whether the migration turned *Remember* on for this saved lh-error-poll configuration. */
export function rememberTurnedOn(saved: Record<string, unknown>): boolean {
  return savedVersion(saved) < 3 && saved.persist !== true && saved.persist !== 'true';
}
