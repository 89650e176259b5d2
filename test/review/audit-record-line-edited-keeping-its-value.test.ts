/**
 * A record line edited so that JSON.parse still gives the value that was hashed: a second `who` (or `what`) key put
 * in front of the real one, spaces between tokens, a character written as a \u escape, a number spelled otherwise.
 * JSON.parse keeps the last of two keys, so the hash matched and `verify` said OK; a reader that keeps the first key
 * (a SIEM's streaming parser, a grep for "user":"…") sees another actor, another path. The package writes every line as
 * JSON.stringify of its record: any other spelling of a record is an edit, and verify names it.
 */
import assert from 'assert';
import fs from 'fs';

import fc from 'fast-check';

import { readChain, verify, writeChain } from '../audit/chain-support';

type Edit = 'first-who' | 'first-path' | 'space' | 'escape' | 'number';

/** The line with an edit that keeps what JSON.parse gives (undefined: nothing of that kind in this line). */
function edit(line: string, kind: Edit): string | undefined {
  switch (kind) {
    case 'first-who':
      return line.includes('"who":') ? `{"who":{"user":"mallory"},${line.slice(1)}` : undefined;
    case 'first-path':
      return line.includes('"what":') ? `{"what":{"path":"/settings/policy-settings"},${line.slice(1)}` : undefined;
    case 'space':
      return line.replace('"seq":', '"seq": ');
    case 'escape':
      return line.replace(/"phase":"(\w)/, (_, c: string) => `"phase":"\\u00${c.charCodeAt(0).toString(16)}`);
    case 'number':
      return line.replace(/"seq":(\d+)/, '"seq":$1.0');
  }
}

describe('review: a record line edited keeping its JSON value', function () {
  it('property: every such edit of any record is named at its line', async function () {
    const { dir, name } = await writeChain(120, 16 * 1024);
    const chain = readChain(dir, name);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.strictEqual(verify(chain).ok, true);
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.constantFrom<Edit>('first-who', 'first-path', 'space', 'escape', 'number'),
        (f, l, kind) => {
          const file = f % chain.files.length;
          const lines = chain.files[file].text.split('\n');
          const at = l % (lines.length - 1);
          const edited = edit(lines[at], kind);
          if (edited === undefined || edited === lines[at]) return;
          assert.deepStrictEqual(JSON.parse(edited), JSON.parse(lines[at]), 'the edit keeps the value');
          lines[at] = edited;
          const files = chain.files.map((x, i) => (i === file ? { ...x, text: lines.join('\n') } : x));
          const report = verify({ ...chain, files });
          assert.strictEqual(report.ok, false, `${kind} at ${chain.files[file].name} line ${at + 1} went undetected`);
          assert.deepStrictEqual([report.firstBad?.file, report.firstBad?.line], [chain.files[file].name, at + 1]);
        },
      ),
      { numRuns: 300, seed: 44 },
    );
  });

  it('a copy whose line ends became CRLF (through Windows) verifies as the original; an edit in it is still named', async function () {
    const { dir, name } = await writeChain(60, 4 * 1024);
    const chain = readChain(dir, name);
    fs.rmSync(dir, { recursive: true, force: true });
    const original = verify(chain);
    assert.strictEqual(original.ok, true);
    const crlf = { ...chain, files: chain.files.map((f) => ({ ...f, text: f.text.replace(/\n/g, '\r\n') })) };
    const copied = verify(crlf);
    assert.strictEqual(copied.ok, true, `a CRLF copy: ${JSON.stringify(copied.firstBad)}`);
    assert.strictEqual(copied.lastSeq, original.lastSeq);
    // the exact-line rule still holds inside a CRLF line
    const lines = crlf.files[0].text.split('\n');
    lines[2] = lines[2].replace('"seq":', '"seq": ');
    const edited = verify({ ...crlf, files: crlf.files.map((f, i) => (i === 0 ? { ...f, text: lines.join('\n') } : f)) });
    assert.strictEqual(edited.ok, false);
    assert.deepStrictEqual([edited.firstBad?.file, edited.firstBad?.line], [crlf.files[0].name, 3]);
  });
});
