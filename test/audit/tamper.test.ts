/**
 * Tamper evidence: a chain of 1,000 records, and random tamperings of every kind the issue lists (edit a field,
 * insert, delete, reorder, truncate the tail, swap or drop files, rewrite the chain with fresh hashes): verify finds
 * every one, and names the first record that is wrong, not a later one.
 */
import assert from 'assert';
import fs from 'fs';

import fc from 'fast-check';

import { AuditRecord } from '../../src/audit';
import { ChainText, readChain, verify, writeChain } from './chain-support';
import { edited, EditedField, editedField, editedRehashed, rewritten } from './tamper-support';

/** LH_AUDIT_TAMPER_RUNS=10000 for the full count (about a minute on one core). */
const RUNS = Number(process.env.LH_AUDIT_TAMPER_RUNS ?? 1500);

interface Line {
  file: number;
  line: number;
}

function linesOf(chain: ChainText): string[][] {
  return chain.files.map((f) => {
    const lines = f.text.split('\n');
    lines.pop();
    return lines;
  });
}

function rebuild(chain: ChainText, lines: string[][], tails: string[] = []): ChainText {
  return {
    ...chain,
    files: chain.files.map((f, i) => ({ name: f.name, text: lines[i].map((l) => `${l}\n`).join('') + (tails[i] ?? '') })),
  };
}

/** Flat positions of every line, to pick from. */
function positions(lines: string[][]): Line[] {
  return lines.flatMap((file, f) => file.map((_, line) => ({ file: f, line })));
}

type Tamper =
  | { kind: 'edit'; at: number; field: EditedField }
  | { kind: 'edit-rehash'; at: number }
  | { kind: 'delete'; at: number }
  | { kind: 'insert'; at: number; copyOf: number }
  | { kind: 'reorder'; at: number; with: number }
  | { kind: 'truncate'; keep: number; cutInLine: boolean }
  | { kind: 'swap-files'; a: number; b: number }
  | { kind: 'drop-file'; file: number }
  | { kind: 'rewrite-chain'; at: number };

const tamper: fc.Arbitrary<Tamper> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), field: editedField }),
  fc.record({ kind: fc.constant('edit-rehash' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), copyOf: fc.nat() }),
  fc.record({ kind: fc.constant('reorder' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat(), cutInLine: fc.boolean() }),
  fc.record({ kind: fc.constant('swap-files' as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant('drop-file' as const), file: fc.nat() }),
  fc.record({ kind: fc.constant('rewrite-chain' as const), at: fc.nat() }),
);

/** Applies one tampering; returns the altered chain and the line verify must name (undefined: any report of tampering). */
function apply(chain: ChainText, t: Tamper): { chain: ChainText; first?: Line } {
  const lines = linesOf(chain);
  const all = positions(lines);
  const pick = (n: number): Line => all[n % all.length];
  switch (t.kind) {
    case 'edit': {
      const p = pick(t.at);
      lines[p.file][p.line] = JSON.stringify(edited(JSON.parse(lines[p.file][p.line]) as AuditRecord, t.field));
      return { chain: rebuild(chain, lines), first: p };
    }
    case 'edit-rehash': {
      // the record's own hash recomputed: the next record no longer follows it (or the checkpoint, for the last)
      const p = pick(t.at);
      lines[p.file][p.line] = editedRehashed(lines[p.file][p.line]);
      const next = all[all.findIndex((q) => q.file === p.file && q.line === p.line) + 1];
      return { chain: rebuild(chain, lines), first: next };
    }
    case 'delete': {
      // the record after the deleted one is the first that no longer follows (none for the last: the checkpoint)
      const p = pick(t.at);
      const next = all[all.indexOf(p) + 1];
      lines[p.file].splice(p.line, 1);
      return { chain: rebuild(chain, lines), first: next === undefined ? undefined : next.file === p.file ? p : next };
    }
    case 'insert': {
      const p = pick(t.at);
      const copy = pick(t.copyOf);
      lines[p.file].splice(p.line, 0, lines[copy.file][copy.line]);
      // a copy of the record that is already there is in its place: the original after it is the duplicate
      const same = copy.file === p.file && copy.line === p.line;
      return { chain: rebuild(chain, lines), first: same ? { file: p.file, line: p.line + 1 } : p };
    }
    case 'reorder': {
      let a = pick(t.at);
      let b = pick(t.with);
      if (a.file === b.file && a.line === b.line) b = all[(all.indexOf(a) + 1) % all.length];
      if (all.indexOf(b) < all.indexOf(a)) [a, b] = [b, a];
      const tmp = lines[a.file][a.line];
      lines[a.file][a.line] = lines[b.file][b.line];
      lines[b.file][b.line] = tmp;
      return { chain: rebuild(chain, lines), first: a };
    }
    case 'truncate': {
      // keep fewer than all lines of the chain; optionally leave half of the next line (looks like a crash)
      const keep = t.keep % all.length;
      const cut = all[keep];
      const kept = lines.slice(0, cut.file + 1).map((file, f) => (f === cut.file ? file.slice(0, cut.line) : file));
      const tails = kept.map((_, f) => (f === cut.file && t.cutInLine ? lines[cut.file][cut.line].slice(0, 20) : ''));
      return { chain: { ...rebuild({ ...chain, files: chain.files.slice(0, cut.file + 1) }, kept, tails) } };
    }
    case 'swap-files': {
      const n = chain.files.length;
      const a = t.a % n;
      let b = t.b % n;
      if (a === b) b = (a + 1) % n;
      const files = [...chain.files];
      [files[a], files[b]] = [files[b], files[a]];
      return { chain: { ...chain, files }, first: { file: Math.min(a, b), line: 0 } };
    }
    case 'drop-file': {
      const f = t.file % chain.files.length;
      const files = chain.files.filter((_, i) => i !== f);
      const isLast = f === chain.files.length - 1;
      return { chain: { ...chain, files }, first: isLast ? undefined : { file: f, line: 0 } };
    }
    case 'rewrite-chain': {
      // an editor who knows the format edits one record and recomputes every hash after it: only the signed
      // checkpoint can tell
      const p = pick(t.at);
      const flat = positions(lines);
      const from = flat.slice(flat.findIndex((x) => x.file === p.file && x.line === p.line));
      const again = rewritten(from.map((q) => lines[q.file][q.line]));
      from.forEach((q, i) => (lines[q.file][q.line] = again[i]));
      return { chain: rebuild(chain, lines) };
    }
  }
}

describe('audit chain: tamper evidence', function () {
  let chain: ChainText;

  before(async function () {
    const { dir, name } = await writeChain(1000, 48 * 1024);
    chain = readChain(dir, name);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an untouched chain of 1,000 records across several files verifies, checkpoint signature checked', function () {
    const report = verify(chain);
    assert.ok(chain.files.length >= 3, `expected rotation into several files, got ${chain.files.length}`);
    assert.strictEqual(report.ok, true, JSON.stringify(report.firstBad));
    assert.strictEqual(report.checkpoint, 'verified');
    assert.ok(report.records >= 1000);
    assert.deepStrictEqual(report.torn, []);
  });

  it(`detects every random tampering (${RUNS} runs) and names the first bad record`, function () {
    this.timeout(600_000);
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(tamper, (t) => {
        const { chain: bad, first } = apply(chain, t);
        const report = verify(bad);
        seen.set(t.kind, (seen.get(t.kind) ?? 0) + 1);
        assert.strictEqual(report.ok, false, `${JSON.stringify(t)} went undetected`);
        assert.ok(report.firstBad, 'a tampered chain names a first bad record');
        if (first) {
          assert.strictEqual(report.firstBad.file, bad.files[first.file].name, `${JSON.stringify(t)}: ${report.firstBad.reason}`);
          assert.strictEqual(report.firstBad.line, first.line + 1, `${JSON.stringify(t)}: ${report.firstBad.reason}`);
        }
      }),
      { numRuns: RUNS },
    );
    assert.strictEqual(seen.size, 9, `every kind of tampering was tried: ${[...seen.keys()].join(', ')}`);
  });

  it('a chain rewritten with fresh hashes passes the hash check alone, and fails on the signed checkpoint', function () {
    const { chain: rewritten } = apply(chain, { kind: 'rewrite-chain', at: 10 });
    const report = verify(rewritten);
    assert.strictEqual(report.ok, false);
    assert.match(report.firstBad?.reason ?? '', /not the one the checkpoint names/);
    // and a forged checkpoint without the key does not pass
    const forged = JSON.parse(rewritten.checkpoint ?? '{}') as Record<string, unknown>;
    forged.hash = verify(rewritten, undefined).lastHash;
    const withForged = verify({ ...rewritten, checkpoint: JSON.stringify(forged) });
    assert.strictEqual(withForged.ok, false);
    assert.match(withForged.firstBad?.reason ?? '', /signature does not match/);
  });

  it('a last line cut short by a crash is reported as torn, not as tampering', function () {
    const last = chain.files[chain.files.length - 1];
    const torn = { ...chain, files: [...chain.files.slice(0, -1), { name: last.name, text: `${last.text}{"v":1,"seq":99` }] };
    const report = verify(torn);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.deepStrictEqual(report.torn, [{ file: last.name, line: last.text.split('\n').length }]);
  });
});
