/**
 * Issue 29.3: the chain file deleted, moved, cut short or written by someone else while Node-RED runs, or the disk
 * full. An intent is acknowledged (its request may go) only when it is in the file the chain's path names; otherwise
 * the append is refused with a reason naming the file, every later one too, until the chain is reopened (a redeploy
 * or a restart). Reopened, the chain goes on in a new file whose file record declares the records missing, so that
 * `lh-audit verify` reports the gap and never a complete chain. A writer never removes a lock it does not hold.
 */
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import fc from 'fast-check';

import { AuditLog, AuditRecord, chainFile, chainIndexes, describeReport, verifyExitCode } from '../../src/audit';
import { actionFields, KEY, readChain, settle, tempDir, verify } from './chain-support';

const NAME = 'chain';

function open(dir: string, options: { maxFileBytes?: number; writeMode?: 'datasync' | 'dsync' | 'sync' } = {}): AuditLog {
  return new AuditLog({ dir, name: NAME, instrument: 'https://lh.example|', key: KEY, ...options });
}

function intent(i: number): ReturnType<typeof actionFields>[0] {
  return actionFields(i)[0];
}

/** Every complete record of the chain's files as they are on disk now. */
function onDisk(dir: string): AuditRecord[] {
  return readChain(dir, NAME)
    .files.flatMap((f) => f.text.split('\n'))
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as AuditRecord];
      } catch {
        return []; // a line cut short or run together with another (a file truncated under the writer)
      }
    });
}

describe('audit file chain: the file behind the path', function () {
  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: an intent after the chain file was deleted is refused, naming the file, and so is every later one`, async function () {
      const dir = tempDir();
      const log = open(dir, { writeMode });
      const broken: Error[] = [];
      log.on('broken', (err: Error) => broken.push(err));
      await log.append(intent(1));
      const file = chainFile(dir, NAME, 1);
      fs.unlinkSync(file);
      await assert.rejects(log.append(intent(2)), (err: Error) => {
        assert.ok(err.message.includes(file), err.message);
        assert.match(err.message, /deleted|moved|replaced/);
        return true;
      });
      await assert.rejects(log.append(intent(3)), /nothing more is sent/);
      assert.equal(broken.length, 1, 'said once');
      await log.close();
    });
  }

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    for (const loss of ['delete', 'truncate'] as const) {
      it(`${writeMode}: the file a reopened chain goes on in, lost (${loss}) before its first write: refused; reopened, the gap is declared`, async function () {
        const dir = tempDir();
        const first = open(dir, { writeMode });
        const acked = [await first.append(intent(1)), await first.append(intent(2))];
        await first.close();
        // a restart: the writer reads the tail, then the file goes before anything more is written to it
        const log = open(dir, { writeMode });
        await log.flush();
        const file = chainFile(dir, NAME, 1);
        if (loss === 'delete') fs.unlinkSync(file);
        else fs.truncateSync(file, 0);
        await assert.rejects(log.append(intent(3)), (err: Error) => {
          assert.ok(err.message.includes(file), err.message);
          return true;
        });
        await log.close();
        assert.ok(!onDisk(dir).some((r) => r.phase === 'intent' && r.id === 'action-3'), 'the refused intent in no file');

        const again = open(dir, { writeMode });
        const next = await again.append(intent(4));
        await again.close();
        const report = verify(readChain(dir, NAME));
        assert.equal(report.ok, false, 'never a complete chain');
        // cut short: an alteration, which verify reports as such; deleted: only missing, in a declared gap
        if (loss === 'truncate') return fs.rmSync(dir, { recursive: true, force: true });
        assert.equal(report.firstBad, undefined, report.firstBad?.reason);
        const last = acked[acked.length - 1];
        assert.ok(
          report.gaps.some((g) => g.from <= last.seq && last.seq <= g.to),
          `the records lost in a declared gap: ${JSON.stringify(report.gaps)}`,
        );
        assert.equal(report.lastSeq, next.seq);
        fs.rmSync(dir, { recursive: true, force: true });
      });
    }
  }

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    for (const loss of ['delete', 'truncate'] as const) {
      it(`${writeMode}: a reopened chain whose last file is full, that file lost (${loss}) before the next file's first write: refused; reopened, the gap is declared`, async function () {
        const dir = tempDir();
        const first = open(dir, { writeMode, maxFileBytes: 1500 });
        const file = chainFile(dir, NAME, 1);
        const acked: AuditRecord[] = [];
        for (let i = 0; !fs.existsSync(file) || fs.statSync(file).size < 1500; i++) acked.push(await first.append(intent(i)));
        await first.close();
        // a restart: the writer reads the tail (file 1, full: the chain goes on in file 2), then file 1 goes
        const log = open(dir, { writeMode, maxFileBytes: 1500 });
        await settle(() => log.path === chainFile(dir, NAME, 2), 'the reopened chain read');
        if (loss === 'delete') fs.unlinkSync(file);
        else fs.truncateSync(file, 0);
        await assert.rejects(log.append(intent(100)), (err: Error) => {
          assert.ok(err.message.includes(file), err.message);
          return true;
        });
        await log.close();
        assert.ok(!onDisk(dir).some((r) => r.phase === 'intent' && r.id === 'action-100'), 'the refused intent in no file');

        const again = open(dir, { writeMode, maxFileBytes: 1500 });
        const next = await again.append(intent(101)).catch(() => undefined);
        await again.close();
        const report = verify(readChain(dir, NAME));
        assert.equal(report.ok, false, 'never a complete chain');
        if (loss === 'truncate') return fs.rmSync(dir, { recursive: true, force: true });
        assert.equal(report.firstBad, undefined, report.firstBad?.reason);
        assert.deepEqual(
          report.gaps.map((g) => [g.from, g.to]),
          [[0, acked[acked.length - 1].seq]],
        );
        assert.equal(report.lastSeq, next?.seq);
        fs.rmSync(dir, { recursive: true, force: true });
      });
    }
  }

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: the chain file lost while the writer moves on to the next one (not yet made): refused; reopened, the gap is declared`, async function () {
      const dir = tempDir();
      const log = open(dir, { writeMode, maxFileBytes: 1500 });
      const acked: AuditRecord[] = [];
      const first = chainFile(dir, NAME, 1);
      for (let i = 0; !fs.existsSync(first) || fs.statSync(first).size < 1500; i++) acked.push(await log.append(intent(i)));
      // file 1 is deleted as the writer opens file 2 (the next append starts it), after the writer last looked at file 1
      const second = chainFile(dir, NAME, 2);
      const original = fs.promises.open;
      fs.promises.open = function (this: unknown, ...args: Parameters<typeof original>) {
        if (args[0] === second && fs.existsSync(first)) fs.unlinkSync(first);
        return original.apply(this, args);
      } as typeof original;
      try {
        await assert.rejects(log.append(intent(100)), (err: Error) => {
          assert.ok(err.message.includes(first), err.message);
          assert.match(err.message, /deleted|moved|replaced/);
          return true;
        });
      } finally {
        fs.promises.open = original;
      }
      await assert.rejects(log.append(intent(101)), /nothing more is sent/);
      await log.close();
      assert.deepEqual(chainIndexes(dir, NAME), [], 'no file left whose records link to the lost ones');

      const again = open(dir, { writeMode, maxFileBytes: 1500 });
      const next = await again.append(intent(102));
      await again.close();
      const report = verify(readChain(dir, NAME));
      assert.equal(report.ok, false, 'never a complete chain');
      assert.equal(report.firstBad, undefined, report.firstBad?.reason);
      assert.deepEqual(
        report.gaps.map((g) => [g.from, g.to]),
        [[0, acked[acked.length - 1].seq]],
      );
      assert.equal(report.lastSeq, next.seq);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  it('a file moved away and another put at its path: refused', async function () {
    const dir = tempDir();
    const log = open(dir);
    await log.append(intent(1));
    const file = chainFile(dir, NAME, 1);
    fs.renameSync(file, `${file}.rotated`);
    fs.writeFileSync(file, '');
    await assert.rejects(log.append(intent(2)), (err: Error) => err.message.includes(file));
    await log.close();
  });

  it('a file cut short (truncated) or appended to by someone else: refused', async function () {
    for (const change of ['truncate', 'append'] as const) {
      const dir = tempDir();
      const log = open(dir);
      await log.append(intent(1));
      const file = chainFile(dir, NAME, 1);
      if (change === 'truncate') fs.truncateSync(file, 10);
      else fs.appendFileSync(file, '{"forged":true}\n');
      await assert.rejects(log.append(intent(2)), (err: Error) => err.message.includes(file), change);
      await log.close();
    }
  });

  it('a full disk (ENOSPC from the kernel): refused, naming the file and the reason', async function () {
    if (!fs.existsSync('/dev/full')) this.skip();
    const dir = tempDir();
    const log = open(dir, { maxFileBytes: 600 });
    for (let i = 0; fs.existsSync(chainFile(dir, NAME, 1)) === false || i < 1; i++) await log.append(intent(i));
    // the next file of the chain is a device where every write fails with ENOSPC
    fs.symlinkSync('/dev/full', chainFile(dir, NAME, 2));
    let refused: Error | undefined;
    for (let i = 10; i < 40 && !refused; i++) {
      await log.append(intent(i)).catch((err: Error) => (refused = err));
    }
    assert.ok(refused, 'an append was refused');
    assert.match(refused.message, /ENOSPC|no space/);
    assert.ok(refused.message.includes(chainFile(dir, NAME, 2)), refused.message);
    await assert.rejects(log.append(intent(99)), /nothing more is sent/);
    await log.close();
  });

  it('close removes the lock only when it is its own', async function () {
    const dir = tempDir();
    const log = open(dir);
    await log.append(intent(1));
    const lock = path.join(dir, `${NAME}.lock`);
    fs.unlinkSync(lock);
    fs.writeFileSync(lock, '999999@another-host');
    await log.close();
    assert.equal(fs.readFileSync(lock, 'utf8'), '999999@another-host');

    const second = tempDir();
    const own = open(second);
    await own.append(intent(1));
    await own.close();
    assert.equal(fs.existsSync(path.join(second, `${NAME}.lock`)), false, 'its own lock is removed');
  });

  it('reopened after the loss, the chain goes on in a new file that declares the gap; verify reports it', async function () {
    const dir = tempDir();
    const log = open(dir, { maxFileBytes: 700 });
    const acked: AuditRecord[] = [];
    for (let i = 0; chainIndexes(dir, NAME).length < 2; i++) acked.push(await log.append(intent(i)));
    for (let i = 100; i < 103; i++) acked.push(await log.append(intent(i)));
    const lost = chainIndexes(dir, NAME).slice(-1)[0];
    fs.unlinkSync(chainFile(dir, NAME, lost));
    await assert.rejects(log.append(intent(200)));
    await log.close();

    const again = open(dir);
    const next = await again.append(intent(300));
    await again.close();
    const records = onDisk(dir);
    const opener = records.find((r) => r.phase === 'file' && r.gap);
    assert.ok(opener && opener.phase === 'file' && opener.gap, 'a file record declaring the gap');
    assert.ok(opener.file > lost, 'in a new file, not at the lost one’s path');
    const lastAcked = acked[acked.length - 1];
    assert.equal(opener.gap.to, lastAcked.seq, 'up to the last record acknowledged');
    assert.equal(opener.prev, lastAcked.hash, 'linked to the last record acknowledged');
    assert.ok(next.seq > lastAcked.seq);

    const report = verify(readChain(dir, NAME));
    assert.equal(report.ok, false, 'never a complete chain');
    assert.equal(report.firstBad, undefined, 'nothing altered: only missing');
    assert.deepEqual(
      report.gaps.map((g) => [g.from, g.to]),
      [[opener.gap.from, opener.gap.to]],
    );
    assert.equal(report.lastSeq, next.seq, 'the records after the gap verify');
    assert.equal(report.checkpoint, 'verified');
    assert.equal(verifyExitCode(report), 1);
    assert.match(describeReport(report), /INCOMPLETE: records #\d+ to #\d+ are missing/);
  });

  it('a chain whose every file is gone goes on from its checkpoint, the gap from #0 declared', async function () {
    const dir = tempDir();
    const log = open(dir);
    for (let i = 0; i < 3; i++) await log.append(intent(i));
    await log.close();
    for (const i of chainIndexes(dir, NAME)) fs.unlinkSync(chainFile(dir, NAME, i));
    const again = open(dir);
    await again.append(intent(9));
    await again.close();
    const report = verify(readChain(dir, NAME));
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.gaps.map((g) => [g.from, g.to]),
      [[0, 3]],
    );
    assert.equal(report.firstBad, undefined);
  });

  it('a gap record that does not fit the records before it is reported as tampering', async function () {
    const dir = tempDir();
    const log = open(dir, { maxFileBytes: 700 });
    for (let i = 0; chainIndexes(dir, NAME).length < 2; i++) await log.append(intent(i));
    await log.close();
    fs.unlinkSync(chainFile(dir, NAME, 2));
    const again = open(dir);
    await again.append(intent(9));
    await again.close();
    const chain = readChain(dir, NAME);
    // a record removed from file 1 as well: the gap declared no longer starts where file 1 ends
    const first = chain.files[0].text.split('\n');
    first.splice(first.length - 2, 1);
    chain.files[0].text = first.join('\n');
    const report = verify(chain);
    assert.equal(report.ok, false);
    assert.ok(report.firstBad, 'tampering, not a declared gap');
  });

  it('random deletions, truncations, rolls and reopens: an acknowledged record was in the named file; one missing is never hidden, and is a declared gap once reopened', async function () {
    this.timeout(60000);
    type Op = 'append' | 'delete' | 'truncate' | 'reopen';
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Op>('append', 'append', 'append', 'append', 'delete', 'truncate', 'reopen'), {
          minLength: 1,
          maxLength: 25,
        }),
        async (ops) => {
          const dir = tempDir();
          let log = open(dir, { maxFileBytes: 900 });
          const acked: AuditRecord[] = [];
          let n = 0;
          try {
            for (const op of ops) {
              if (op === 'append') {
                const record = await log.append(intent(n++)).catch(() => undefined);
                if (!record) continue;
                // acknowledged: it is in the file the chain's path names, now
                const text = fs.readFileSync(log.path, 'utf8');
                assert.ok(text.includes(record.hash), `record #${record.seq} acknowledged but not in ${log.path}`);
                acked.push(record);
              } else if (op === 'reopen') {
                await log.close();
                log = open(dir, { maxFileBytes: 900 });
              } else {
                const files = chainIndexes(dir, NAME);
                const last = files[files.length - 1];
                if (last === undefined) continue;
                if (op === 'delete') fs.unlinkSync(chainFile(dir, NAME, last));
                else fs.truncateSync(chainFile(dir, NAME, last), 5);
              }
            }
            // the end of the run: a redeploy, and one more action (the writer that reopens sees what is missing)
            await log.close();
            log = open(dir, { maxFileBytes: 900 });
            await log.append(intent(n++)).catch(() => undefined);
          } finally {
            await log.close();
          }
          const report = verify(readChain(dir, NAME));
          const present = new Set(onDisk(dir).map((r) => r.hash));
          const missing = acked.filter((r) => !present.has(r.hash));
          // a missing record acknowledged before is never hidden: verify does not call the chain complete
          if (missing.length > 0) assert.equal(report.ok, false, `#${missing[0].seq} missing: ${describeReport(report)}`);
          // deleted files only (nothing cut short, which is an alteration verify reports as such): every record missing
          // is in a gap the writer declared, and everything else verifies
          if (!ops.includes('truncate')) {
            assert.equal(report.firstBad, undefined, report.firstBad?.reason);
            for (const r of missing) {
              assert.ok(
                report.gaps.some((g) => g.from <= r.seq && r.seq <= g.to),
                `acknowledged record #${r.seq} is missing without a declared gap: ${describeReport(report)}`,
              );
            }
          }
          fs.rmSync(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 40, seed: 2903 },
    );
  });
});
