/**
 * A chain whose last line parses but is no record a writer can go on from (`{}`, `[]`, `null`, a record's seq or hash
 * of the wrong type, NULs before it): the next writer must refuse the chain with a message naming the file and what to
 * do, as it does for a last file without a complete record. It went on instead: from `{}` or `[]` it took the seq for
 * missing and declared records #0 to #N lost that the file still holds (a false gap, in a new file), and from `null` or
 * NULs it refused with a bare JSON or TypeError text naming no file.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { AuditLog, chainFile, chainIndexes } from '../../src/audit';
import { actionFields, KEY, tempDir } from '../audit/chain-support';

const NAME = 'edited';

describe('audit: the last line of a chain is not a record', function () {
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const last of ['{}', '[]', 'null', '{"seq":"3","hash":5}', '\u0000\u0000{"seq":4}']) {
    it(`${JSON.stringify(last)}: the next writer refuses, naming the file and "lh-audit verify", and writes nothing`, async function () {
      dir = tempDir();
      const options = { dir, name: NAME, instrument: 'https://lh.example|', key: KEY };
      const first = new AuditLog(options);
      for (let i = 0; i < 2; i++) for (const f of actionFields(i)) await first.append(f);
      await first.close();
      const file = chainFile(dir, NAME, 1);
      fs.appendFileSync(file, `${last}\n`);
      const before = fs.readFileSync(file, 'utf8');

      const next = new AuditLog(options);
      const gaps: unknown[] = [];
      next.on('gap', (gap) => gaps.push(gap));
      await assert.rejects(next.append(actionFields(9)[0]), (err: Error) => {
        assert.ok(err.message.includes(`the last line of ${file} is not an audit record`), err.message);
        assert.match(err.message, /verify it \(npx lh-audit verify\) before writing more/);
        return true;
      });
      await next.close();
      assert.deepEqual(gaps, [], 'no records declared lost');
      assert.deepEqual(chainIndexes(dir, NAME), [1], 'no new file');
      assert.equal(fs.readFileSync(file, 'utf8'), before, 'nothing written');
    });
  }
});
