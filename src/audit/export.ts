import { type AuditRecord, type ChainGap } from './record';

export const CSV_COLUMNS = [
  'seq',
  'at',
  'phase',
  'id',
  'instrument',
  'operation',
  'method',
  'path',
  'who',
  'body',
  'old',
  'why',
  'result',
  'status',
  'reason',
  'hash',
  'prev',
] as const;

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return quoted(guardFormulas(text));
}

/**
 * The text with a `'` before each place a spreadsheet could start a cell with a formula sign (= + - @ tab CR): the
 * start, and after a `;` or a line break inside it. A spreadsheet of a locale whose list separator is `;` (a European
 * Excel, LibreOffice set so) splits a row at every `;` and takes a `"` as quoting only at the start of a cell, so a
 * comma-quoted cell `"x;=HYPERLINK(…)"` is two cells there, the second starting with `=`; a line break inside a quoted
 * cell likewise ends that row there. Quotes before the sign (`;"=`) are passed over: a cell's quote is not text; so
 * are spaces and tabs (` =HYPERLINK(…)`): LibreOffice's "trim spaces" takes them off and reads the rest as a formula.
 */
export function guardFormulas(text: string): string {
  const safe = /^[ \t]*[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return safe.replace(/([;\n\r])(?="*[ \t]*[=+\-@\t\r])/g, "$1'");
}

/** RFC 4180: a cell with a quote, a comma or a line break is quoted. */
function quoted(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** What a file record declaring records missing says, for a reader of the export (as `verify` says it). */
function gapText(gap: ChainGap | undefined): string {
  if (!gap || typeof gap !== 'object') return '';
  const what =
    gap.to < gap.from
      ? `records before #${String(gap.from)} are missing (their numbers were used again)`
      : `records #${String(gap.from)} to #${String(gap.to)} are missing`;
  return `${what} (${String(gap.reason ?? '')})`;
}

/** The CSV header line (without its line end). */
export function csvHeader(): string {
  return CSV_COLUMNS.join(',');
}

/** One record as a CSV row (without its line end). */
export function csvRow(r: AuditRecord): string {
  const row: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    seq: r.seq,
    at: r.at,
    phase: r.phase,
    id: r.phase === 'file' ? '' : r.id,
    instrument: r.instrument,
    operation: r.phase === 'intent' ? r.what.operation : r.phase === 'outcome' ? r.operation : '',
    method: r.phase === 'intent' ? r.what.method : '',
    path: r.phase === 'intent' ? r.what.path : '',
    who: r.phase === 'intent' ? r.who : '',
    body: r.phase === 'intent' ? r.what.body : '',
    old: r.phase === 'intent' ? r.old : '',
    why: r.phase === 'intent' ? r.why : '',
    result: r.phase === 'outcome' ? r.outcome.result : '',
    status: r.phase === 'outcome' ? r.outcome.status : '',
    reason: r.phase === 'outcome' ? r.outcome.reason : r.phase === 'file' ? gapText(r.gap) : '',
    hash: r.hash,
    prev: r.prev,
  };
  return CSV_COLUMNS.map((c) => cell(row[c])).join(',');
}

/** The records as CSV (RFC 4180, one header line), for a spreadsheet or a review. */
export function toCsv(records: Iterable<AuditRecord>): string {
  const lines = [csvHeader()];
  for (const r of records) lines.push(csvRow(r));
  return `${lines.join('\n')}\n`;
}

/**
 * The rows of a chain file's complete records, each with its line end (a torn last line is left out): a chain is
 * exported a file at a time, never as one string (a long chain's CSV passes the longest string V8 makes).
 */
export function csvRowsOf(text: string, name = 'the chain'): string {
  let out = '';
  for (const record of parseRecords(text, name)) out += `${csvRow(record)}\n`;
  return out;
}

/** The complete records of a chain file's text (a torn last line is left out); `name` names it in an error. */
export function parseRecords(text: string, name = 'the chain'): AuditRecord[] {
  const lines = text.split('\n');
  lines.pop();
  const records: AuditRecord[] = [];
  lines.forEach((line, i) => {
    if (line === '') return;
    try {
      records.push(JSON.parse(line) as AuditRecord);
    } catch {
      throw new Error(`${name} line ${i + 1} is not a JSON record: nothing exported (lh-audit verify names what was altered)`);
    }
  });
  return records;
}
