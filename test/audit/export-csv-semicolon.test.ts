/**
 * `lh-audit export` opened by a spreadsheet whose list separator is `;` (a European Excel, LibreOffice set so): it
 * splits each row at every `;` and takes a `"` as quoting only at the start of a cell, so a comma-quoted cell holding
 * `x;=HYPERLINK(…)` or a line break is cut there and the next piece starts a cell of its own. No cell may start with a
 * formula sign in either reading, and the comma reading (RFC 4180) still gives every cell as before, guard quotes aside.
 */
import assert from 'assert';

import { AuditRecord, GENESIS, guardFormulas, seal, toCsv } from '../../src/audit';
import { Rng } from '../support/prng';

/**
 * A spreadsheet's reading of delimited text with `sep`: a cell starting with `"` is quoted (`""` a quote, a lone `"`
 * ends the quoting and the rest up to the separator is taken as it is); any other cell runs to the next separator or
 * line break.
 */
function readCells(text: string, sep: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let cell = '';
    if (text[i] === '"') {
      i++;
      while (i < text.length) {
        if (text[i] === '"' && text[i + 1] === '"') {
          cell += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else cell += text[i++];
      }
    }
    while (i < text.length && text[i] !== sep && text[i] !== '\n') cell += text[i++];
    row.push(cell);
    if (text[i] === '\n' || i >= text.length) {
      rows.push(row);
      row = [];
    }
    i++;
  }
  return rows;
}

const FORMULA = /^[=+\-@\t\r]/;
const PIECES = [';', ',', '"', '\n', '\r', '\r\n', '=', '+', '-', '@', '\t', "'", ' ', 'x', 'HYPERLINK("http://e.x")', 'é'];

function textOf(rng: Rng): string {
  let t = '';
  for (let n = rng.int(0, 8); n > 0; n--) t += rng.pick(PIECES);
  return t;
}

function recordsOf(rng: Rng): { records: AuditRecord[]; texts: Record<string, string> } {
  const texts = { reason: textOf(rng), path: textOf(rng), operation: textOf(rng), signer: textOf(rng), body: textOf(rng) };
  const intent = seal(
    {
      phase: 'intent',
      id: 'x',
      at: '2026-01-01T00:00:00.000Z',
      instrument: 'i',
      who: { signer: texts.signer },
      what: { api: 'A', method: 'PUT', operation: texts.operation, path: texts.path, body: texts.body },
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
      operation: texts.operation,
      outcome: { result: 'refused', reason: texts.reason },
    },
    1,
    intent.hash,
  );
  return { records: [intent, outcome] as AuditRecord[], texts };
}

describe('audit export CSV in a semicolon locale', function () {
  it('the example: a cell x;=HYPERLINK(…) starts no cell with = when read with ; as the separator', function () {
    const { records } = recordsOf(new Rng(1));
    const outcome = records[1] as Extract<AuditRecord, { phase: 'outcome' }>;
    const forged = seal(
      { ...outcome, outcome: { result: 'refused', reason: 'x;=HYPERLINK("http://e.x","a")' } },
      1,
      records[0].hash,
    );
    const cells = readCells(toCsv([records[0], forged] as AuditRecord[]), ';').flat();
    for (const cell of cells) assert.doesNotMatch(cell, FORMULA, JSON.stringify(cell));
  });

  it('seeded: no cell starts like a formula read with ; or with , and the comma reading keeps every text', function () {
    for (let seed = 1; seed <= 400; seed++) {
      const rng = new Rng(seed);
      const { records, texts } = recordsOf(rng);
      const csv = toCsv(records);
      for (const cell of readCells(csv, ';').flat())
        assert.doesNotMatch(cell, FORMULA, `seed ${seed}: ${JSON.stringify(cell)} in ${JSON.stringify(csv)}`);
      const rows = readCells(csv, ',');
      assert.strictEqual(rows.length, 3, `seed ${seed}`);
      for (const row of rows) {
        assert.strictEqual(row.length, rows[0].length, `seed ${seed}`);
        for (const cell of row) assert.doesNotMatch(cell, FORMULA, `seed ${seed}: ${JSON.stringify(cell)}`);
      }
      const col = (name: string): number => rows[0].indexOf(name);
      assert.strictEqual(rows[2][col('reason')], guardFormulas(texts.reason), `seed ${seed}`);
      assert.strictEqual(rows[1][col('path')], guardFormulas(texts.path), `seed ${seed}`);
      assert.strictEqual(rows[1][col('operation')], guardFormulas(texts.operation), `seed ${seed}`);
      assert.strictEqual(rows[1][col('body')], guardFormulas(texts.body), `seed ${seed}`);
      // the guard only adds quotes: taken out again where it put them, the text is the record's
      for (const t of Object.values(texts))
        assert.strictEqual(
          guardFormulas(t).replace(/(^|[;\n\r])'(?="*[ \t]*[=+\-@\t\r])/g, '$1'),
          t.replace(/(^|[;\n\r])'(?="*[ \t]*[=+\-@\t\r])/g, '$1'),
        );
    }
  });

  it('seeded: no cell starts like a formula once a spreadsheet trims its leading spaces and tabs (either separator)', function () {
    // LibreOffice's import option "trim spaces" reads the cell ` =HYPERLINK(…)` as the formula =HYPERLINK(…)
    const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
    const cases = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;
    console.log(`      csv trim seed: ${seed} (LH_SEED=${seed} replays it)`);
    const rng = new Rng(seed);
    const pieces = [' ', '  ', '\t', ' \t ', '=', '+', '-', '@', ';', '\n', '"', 'x', 'HYPERLINK("http://e.x")'];
    const trimmed = (cell: string): string => cell.replace(/^[ \t]+/, '');
    for (let n = 0; n < cases; n++) {
      let text = '';
      for (let k = rng.int(1, 8); k > 0; k--) text += rng.pick(pieces);
      const { records } = recordsOf(rng);
      const outcome = records[1] as Extract<AuditRecord, { phase: 'outcome' }>;
      const forged = seal({ ...outcome, outcome: { result: 'refused', reason: text } }, 1, records[0].hash);
      const csv = toCsv([records[0], forged] as AuditRecord[]);
      for (const sep of [';', ','])
        for (const cell of readCells(csv, sep).flat())
          assert.doesNotMatch(
            trimmed(cell),
            FORMULA,
            `seed ${seed}, case ${n}: ${JSON.stringify(text)} gave ${JSON.stringify(cell)}`,
          );
    }
    // the case as found
    assert.equal(guardFormulas(' =HYPERLINK("http://e.x","a")'), `' =HYPERLINK("http://e.x","a")`);
    assert.equal(guardFormulas('x; \t=1'), "x;' \t=1");
  });
});
