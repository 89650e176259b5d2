/**
 * A writer killed (SIGKILL) at a rotation, once the chain's next file exists and before its file record is in it
 * whole, leaves that file empty or holding a torn line only. That is a crash, not an edit: verify must say the chain is
 * intact (the file reported as torn), never TAMPERED ("file N of the chain is empty"), and the next start must go on
 * with the chain, not refuse it ("file N has no complete record": every write to the instrument refused until a person
 * came). A second crash at the next file the restarted writer begins leaves two such files: the same. The disk full at
 * a rotation (the new file made, its first write refused with ENOSPC) leaves an empty file too: refused then, and once
 * space is back a redeploy goes on. A crash as the writer begins the file that declares records missing (a chain file
 * deleted while Node-RED was stopped): the next start goes on in that file, declaring the same gap.
 *
 * Property (seeded PRNG, the seed printed; LH_SEED=<n> replays it, LH_CASES=<n> draws more): the file the crash falls
 * at, how it falls (created, or its first write cut short) and the write mode are drawn.
 */
import assert from 'node:assert/strict';
import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';

import { AuditLog, chainFile, chainIndexes } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from '../audit/chain-support';
import { Rng } from '../support/prng';
import { tsChildArgs } from '../support/ts-child';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;
const NAME = 'crash';
const HOW = ['created', 'torn'] as const;
const MODES = ['datasync', 'dsync', 'sync'] as const;

/** Runs the child until it kills itself at file `dieAt`; the records it reported durable. */
async function crashAt(
  dir: string,
  dieAt: number,
  how: string,
  writeMode: string,
  firstAction: number,
): Promise<Map<number, string>> {
  const child = spawn(
    process.execPath,
    tsChildArgs(path.join(__dirname, 'audit-crash-at-rotation-child.ts'), [
      dir,
      String(dieAt),
      how,
      writeMode,
      String(firstAction),
    ]),
    { cwd: path.resolve(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const durable = new Map<number, string>();
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const [word, seq, hash] = line.split(' ');
      if (word === 'durable') durable.set(Number(seq), hash);
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  );
  assert.equal(signal, 'SIGKILL', `the child was to die at file ${dieAt} (${how}), it ended with ${String(code)}`);
  return durable;
}

/** The chain verifies as intact, the begun file(s) reported torn, every durable record there. */
function assertIntact(dir: string, durable: Map<number, string>, what: string): number {
  const chain = readChain(dir, NAME);
  const report = verify(chain, KEY);
  assert.equal(report.ok, true, `${what}: ${report.firstBad?.reason ?? ''}`);
  // absent when killed before its first write (under load it moves at every 8th batch): not authenticated, not tampered
  assert.ok(['verified', 'absent'].includes(report.checkpoint), `${what}: checkpoint ${report.checkpoint}`);
  const onDisk = new Map<number, string>();
  for (const f of chain.files)
    for (const line of f.text.split('\n').slice(0, -1)) {
      const r = JSON.parse(line) as { seq: number; hash: string };
      onDisk.set(r.seq, r.hash);
    }
  for (const [seq, hash] of durable) assert.equal(onDisk.get(seq), hash, `${what}: record #${seq} was reported durable`);
  return report.records;
}

describe('audit: a writer killed at a rotation, its next file begun and not written', function () {
  this.timeout(60_000);
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`the chain verifies and the next start goes on with it (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      crash-at-rotation seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const dieAt = rng.int(2, 4);
      const how = rng.pick(HOW);
      const writeMode = rng.pick(MODES);
      const what = `case ${c}: killed at file ${dieAt} (${how}, ${writeMode})`;
      dir = tempDir();
      const durable = await crashAt(dir, dieAt, how, writeMode, 0);
      const begun = fs.readFileSync(path.join(dir, `${NAME}.${String(dieAt).padStart(6, '0')}.jsonl`), 'utf8');
      assert.equal(how === 'created' ? begun === '' : begun !== '' && !begun.includes('\n'), true, `${what}: ${begun}`);
      assertIntact(dir, durable, `${what}, verify`);

      // a second crash, at the next file the restarted writer begins
      const next = Math.max(...chainIndexes(dir, NAME)) + 1;
      for (const [seq, hash] of await crashAt(dir, next, 'created', writeMode, 100_000)) durable.set(seq, hash);
      const records = assertIntact(dir, durable, `${what}, then at file ${next} (created)`);

      const log = new AuditLog({ dir, name: NAME, instrument: 'https://lh.example|', key: KEY, maxFileBytes: 1200, writeMode });
      const [intent] = actionFields(1_000_000);
      const written = await log.append(intent).catch((err: Error) => assert.fail(`${what}: the restart refused: ${err.message}`));
      await log.close();
      const after = verify(readChain(dir, NAME), KEY);
      assert.equal(after.ok, true, `${what}, after the restart: ${after.firstBad?.reason ?? ''}`);
      assert.equal(after.lastSeq, written.seq, what);
      assert.ok(after.records > records, `${what}: the restart's records are in the chain`);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the disk full at a rotation: refused, the new file left empty; once space is back a redeploy goes on', async function () {
    dir = tempDir();
    const second = chainFile(dir, NAME, 2);
    const writeSync = fs.writeSync;
    // ENOSPC for every write to file 2 (the chain's appends; the checkpoint is written in place, in its own file)
    (fs as { writeSync: unknown }).writeSync = (fd: number, ...rest: unknown[]): number => {
      if (fs.existsSync(second) && fs.fstatSync(fd).ino === fs.statSync(second).ino) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return (writeSync as (...a: unknown[]) => number)(fd, ...rest);
    };
    const options = { dir, name: NAME, instrument: 'https://lh.example|', key: KEY, maxFileBytes: 1200 };
    let acknowledged = -1;
    try {
      const log = new AuditLog(options);
      let refused: Error | undefined;
      for (let i = 0; !refused && i < 100; i++) {
        await log.append(actionFields(i)[0]).then(
          (r) => (acknowledged = r.seq),
          (err: Error) => (refused = err),
        );
      }
      await log.close();
      assert.match(String(refused?.message), /ENOSPC: no space left on device.*nothing more is sent to the instrument/);
    } finally {
      (fs as { writeSync: unknown }).writeSync = writeSync;
    }
    assert.equal(fs.readFileSync(second, 'utf8'), '', 'file 2 made, nothing in it');
    const report = verify(readChain(dir, NAME), KEY);
    assert.equal(report.ok, true, report.firstBad?.reason);
    assert.equal(report.lastSeq, acknowledged);

    const log = new AuditLog(options);
    const written = await log.append(actionFields(1000)[0]);
    await log.close();
    const after = verify(readChain(dir, NAME), KEY);
    assert.equal(after.ok, true, after.firstBad?.reason);
    assert.equal(after.checkpoint, 'verified');
    assert.deepEqual([after.lastSeq, after.torn], [written.seq, []], 'the file record and the intent written into file 2');
    assert.deepEqual(chainIndexes(dir, NAME), [1, 2]);
  });

  it('killed as it begins the file declaring a gap: the next start declares it in that file, verify says INCOMPLETE', async function () {
    dir = tempDir();
    const options = { dir, name: NAME, instrument: 'https://lh.example|', key: KEY, maxFileBytes: 1200 };
    const log = new AuditLog(options);
    for (let i = 0; chainIndexes(dir, NAME).length < 3; i++) await log.append(actionFields(i)[0]);
    await log.close();
    fs.rmSync(chainFile(dir, NAME, 3)); // deleted while Node-RED was stopped: the checkpoint names a record it held

    // the next start declares the gap in file 4 and is killed once file 4 exists
    await crashAt(dir, 4, 'created', 'datasync', 100_000);
    assert.equal(fs.readFileSync(chainFile(dir, NAME, 4), 'utf8'), '');

    const next = new AuditLog(options);
    const gaps: unknown[] = [];
    next.on('gap', (gap) => gaps.push(gap));
    const written = await next.append(actionFields(200_000)[0]);
    await next.close();
    assert.equal(gaps.length, 1, 'the gap declared');
    assert.deepEqual(chainIndexes(dir, NAME), [1, 2, 4], 'the gap declared in the file begun, not after it');
    const report = verify(readChain(dir, NAME), KEY);
    assert.equal(report.firstBad, undefined, report.firstBad?.reason);
    assert.equal(report.gaps.length, 1, 'INCOMPLETE: the records of file 3 missing, declared');
    assert.equal(report.lastSeq, written.seq);
  });
});
