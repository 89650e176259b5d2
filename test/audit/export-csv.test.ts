/**
 * `lh-audit export` (files and Redis share toCsv): text from a flow or the instrument (a reason, a path, an operator's
 * typed name) never reaches a spreadsheet as a formula, and every cell reads back as written (RFC 4180).
 */
import assert from 'assert';

import fc from 'fast-check';

import { AuditRecord, GENESIS, guardFormulas, seal, toCsv } from '../../src/audit';

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
        // the cell is the text, with a quote before it when it starts like a formula, and after a ; or a line break
        // followed by one (a text that has a quote there already is written as it is: a reader cannot tell it from a
        // guarded one, so compare the other way)
        const guard = guardFormulas;
        assert.strictEqual(rows[2][col('reason')], guard(reason));
        assert.strictEqual(rows[1][col('path')], guard(path));
        assert.strictEqual(rows[1][col('operation')], guard(operation));
        assert.strictEqual(rows[1][col('who')], guard(JSON.stringify({ signer })));
      }),
      { numRuns: 300 },
    );
  });
});
