/**
 * `lh-audit export` (files and Redis share toCsv): text from a flow or the instrument (a reason, a path, an operator's
 * typed name) never reaches a spreadsheet as a formula, and every cell reads back as written (RFC 4180).
 */
import assert from 'assert';

import fc from 'fast-check';

import { AuditRecord, GENESIS, seal, toCsv } from '../../src/audit';

/** RFC 4180 rows (quoted cells with "" and line breaks inside). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',' || c === '\n') {
      row.push(cell);
      cell = '';
      if (c === '\n') {
        rows.push(row);
        row = [];
      }
    } else cell += c;
  }
  return rows;
}

const userText = fc
  .tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r', '', 'a'), fc.string({ maxLength: 30 }))
  .map(([a, b]) => a + b);

describe('audit export CSV', function () {
  it('no cell starts like a formula, and each reads back as the record had it (after the guarding quote)', function () {
    fc.assert(
      fc.property(userText, userText, userText, userText, (reason, path, signer, operation) => {
        const intent = seal(
          {
            phase: 'intent',
            id: 'x',
            at: '2026-01-01T00:00:00.000Z',
            instrument: 'i',
            who: { signer },
            what: { api: 'A', method: 'PUT', operation, path, body: reason },
          },
          0,
          GENESIS,
        );
        const outcome = seal(
          {
            phase: 'outcome',
            id: 'x',
            at: '2026-01-01T00:00:00.000Z',
            instrument: 'i',
            operation,
            outcome: { result: 'refused', reason },
          },
          1,
          intent.hash,
        );
        const rows = parseCsv(toCsv([intent, outcome] as AuditRecord[]));
        assert.strictEqual(rows.length, 3);
        for (const row of rows) {
          assert.strictEqual(row.length, rows[0].length);
          for (const cell of row) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, JSON.stringify(cell));
        }
        const col = (name: string): number => rows[0].indexOf(name);
        const unguard = (cell: string): string => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);
        assert.strictEqual(unguard(rows[2][col('reason')]), reason);
        assert.strictEqual(unguard(rows[1][col('path')]), path);
        assert.strictEqual(unguard(rows[1][col('operation')]), operation);
        assert.deepStrictEqual(JSON.parse(unguard(rows[1][col('who')])), { signer });
      }),
      { numRuns: 300 },
    );
  });
});
