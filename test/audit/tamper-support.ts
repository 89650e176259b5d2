/** The record tamperings that the tamper tests of a chain in files (tamper.test.ts) and in a Redis stream share. */
import fc from 'fast-check';

import { AuditRecord, hashOf } from '../../src/audit';

/** What an edit of one record changes. */
export type EditedField = 'at' | 'path' | 'result' | 'seq' | 'who' | 'extra';

export const editedField: fc.Arbitrary<EditedField> = fc.constantFrom('at', 'path', 'result', 'seq', 'who', 'extra');

/** A copy of `record` with `field` changed (its hash left as it was). */
export function edited(record: AuditRecord, field: EditedField): AuditRecord {
  const r = JSON.parse(JSON.stringify(record)) as AuditRecord & Record<string, unknown>;
  if (field === 'at') r.at = new Date(Date.parse(r.at) + 1000).toISOString();
  else if (field === 'seq') r.seq = r.seq + 1;
  else if (field === 'extra') r.note = 'added later';
  else if (r.phase === 'intent' && field === 'path') r.what.path = '/settings/policy-settings';
  else if (r.phase === 'intent' && field === 'who') r.who = { user: 'someone-else' };
  else if (r.phase === 'outcome') r.outcome = { ...r.outcome, result: r.outcome.result === 'applied' ? 'refused' : 'applied' };
  else r.at = 'altered';
  return r;
}

/** The record line `line` edited and its own hash recomputed: the next record no longer follows it. */
export function editedRehashed(line: string): string {
  const r = edited(JSON.parse(line) as AuditRecord, 'at');
  r.hash = hashOf(r);
  return JSON.stringify(r);
}

/**
 * The record lines `lines` (consecutive in the chain) as an editor who knows the format rewrites them: the first
 * edited, every hash from it on recomputed and each next record chained on to the new one.
 */
export function rewritten(lines: string[]): string[] {
  let prev: string | undefined;
  return lines.map((line) => {
    const r = JSON.parse(line) as AuditRecord;
    const changed = prev === undefined ? edited(r, 'at') : { ...r, prev };
    changed.hash = hashOf(changed);
    prev = changed.hash;
    return JSON.stringify(changed);
  });
}
