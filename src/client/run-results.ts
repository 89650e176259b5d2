/**
 * What a run record's `runResult` says, by whole known words only. The instrument's words are not documented
 * (observed-instrument.md lists the field, not its values), so a word is mapped only when it is one of the words
 * below, in any letter case and with surrounding blanks ignored; anything else ("Not completed", "Incomplete",
 * "Unsuccessful", "Success?", a number) is `unknown`, never `completed`, and the instrument's text is kept for
 * the person reading it. Pure: no I/O.
 */
import { instrumentDate } from './run-state';

export type RunOutcome = 'completed' | 'aborted' | 'failed' | 'unknown';

export interface MappedRunResult {
  result: RunOutcome;
  /** the instrument's own words (as sent, numbers as text); null when it gave none */
  resultText: string | null;
}

/** The words known for each outcome, lower case. A word not listed is `unknown`. */
export const RUN_RESULT_WORDS: Readonly<Record<Exclude<RunOutcome, 'unknown'>, readonly string[]>> = {
  completed: ['completed', 'complete', 'success', 'successful', 'succeeded'],
  aborted: ['aborted', 'cancelled', 'canceled'],
  failed: ['failed', 'failure', 'error', 'errored'],
};

const BY_WORD = new Map<string, Exclude<RunOutcome, 'unknown'>>();
for (const [outcome, words] of Object.entries(RUN_RESULT_WORDS) as [Exclude<RunOutcome, 'unknown'>, readonly string[]][]) {
  for (const word of words) BY_WORD.set(word, outcome);
}

/** The instrument's result as text: strings as sent, finite numbers and booleans as their text, else null. */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
  return null;
}

/** Maps a run record's `runResult` by whole known words (letter case and surrounding blanks aside). */
export function mapRunResult(value: unknown): MappedRunResult {
  const resultText = textOf(value);
  const known = typeof value === 'string' ? BY_WORD.get(value.trim().toLowerCase()) : undefined;
  return { result: known ?? 'unknown', resultText };
}

/** A run record's start as ms since the epoch, read like every instrument date (zone-less: UTC); NaN when none. */
export function recordStartMs(record: { startTime?: unknown }): number {
  const iso = instrumentDate(record.startTime);
  return iso === null ? NaN : Date.parse(iso);
}

/**
 * The run records that are new since `before` (the ids the instrument listed at an earlier moment), of the protocol
 * named (any, when empty or when the record names none), newest first (records without a start time last, in list
 * order). A record listed before is never new, whatever its time stamp says: the instrument's clock and zone are
 * no evidence of which run a record belongs to.
 */
export function newRecords<R extends { id: string; protocolName?: unknown; startTime?: unknown }>(
  records: readonly R[],
  before: ReadonlySet<string>,
  protocolName: string | null,
): R[] {
  const fresh = records
    .map((record, index) => ({ record, index, start: recordStartMs(record) }))
    .filter(({ record }) => !before.has(record.id))
    .filter(({ record }) => !protocolName || typeof record.protocolName !== 'string' || record.protocolName === protocolName);
  fresh.sort((a, b) => {
    const an = Number.isNaN(a.start);
    const bn = Number.isNaN(b.start);
    if (an !== bn) return an ? 1 : -1;
    if (!an && a.start !== b.start) return b.start - a.start;
    return a.index - b.index;
  });
  return fresh.map((f) => f.record);
}
