/**
 * The file a chain moves on from, checked once the next file exists (handleFor). What the failure paths
 * leave behind: no empty chain file that stops the reopen, and every way a chain goes on in a new file at once (a
 * declared gap included) checks the file it leaves.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { AuditLog, AuditRecord, chainFile, chainIndexes } from '../../src/audit';
import { actionFields, assertLostInGaps, KEY, readChain, settle, tempDir, verify } from './chain-support';

const NAME = 'chain';

function open(dir: string, options: { maxFileBytes?: number; writeMode?: 'datasync' | 'dsync' | 'sync' } = {}): AuditLog {
  return new AuditLog({ dir, name: NAME, instrument: 'https://lh.example|', key: KEY, ...options });
}

function intent(i: number): ReturnType<typeof actionFields>[0] {
  return actionFields(i)[0];
}

/** Reopened, the chain takes the next record and verifies whole up to it (then the directory is removed). */
async function goesOnAfterReopen(dir: string, writeMode: 'datasync' | 'dsync' | 'sync'): Promise<void> {
  const again = open(dir, { writeMode, maxFileBytes: 1500 });
  const next = await again.append(intent(101));
  await again.close();
  const report = verify(readChain(dir, NAME));
  assert.equal(report.firstBad, undefined, report.firstBad?.reason);
  assert.equal(report.lastSeq, next.seq);
  fs.rmSync(dir, { recursive: true, force: true });
}

describe('audit file chain: moving on to the next file (review15)', function () {
  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: the file left failing to close: refused, and no empty next file left to stop the reopen`, async function () {
      const dir = tempDir();
      const log = open(dir, { writeMode, maxFileBytes: 1500 });
      const first = chainFile(dir, NAME, 1);
      const acked: AuditRecord[] = [];
      for (let i = 0; !fs.existsSync(first) || fs.statSync(first).size < 1500; i++) acked.push(await log.append(intent(i)));
      // the close of file 1's handle fails (EIO: an NFS close, a disk error reported late); it is closed all the same
      const fh = (log as unknown as { handle: { fh: fs.promises.FileHandle } }).handle.fh;
      const original = fh.close.bind(fh);
      let failed = false;
      Object.defineProperty(fh, 'close', {
        configurable: true,
        value: () => {
          if (failed) return original();
          failed = true;
          return original().then(() => {
            throw Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' });
          });
        },
      });
      await assert.rejects(log.append(intent(100)), /EIO/);
      assert.ok(failed, 'the close failed');
      await log.close();
      // the refused intent's file, empty: removed (an empty chain file stops the reopen: "no complete record")
      assert.deepEqual(chainIndexes(dir, NAME), [1], 'no empty file 2 left behind');

      await goesOnAfterReopen(dir, writeMode);
    });
  }

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: a chain reopened after a gap, its tail file deleted before the gap's file is written: refused; reopened, every missing record is in a declared gap`, async function () {
      const dir = tempDir();
      const writer = open(dir, { writeMode, maxFileBytes: 1500 });
      const acked: AuditRecord[] = [];
      for (let i = 0; chainIndexes(dir, NAME).length < 2; i++) acked.push(await writer.append(intent(i)));
      await writer.close();
      // file 2 (the last) is lost: the checkpoint names records no file holds; a reopen goes on in file 3 after a gap
      fs.unlinkSync(chainFile(dir, NAME, 2));
      const log = open(dir, { writeMode, maxFileBytes: 1500 });
      await settle(() => log.path === chainFile(dir, NAME, 3), 'the reopened chain read');
      // then file 1, the tail the gap is declared after, goes too, before the gap's file is written
      fs.unlinkSync(chainFile(dir, NAME, 1));
      await assert.rejects(log.append(intent(100)), (err: Error) => err.message.includes(chainFile(dir, NAME, 1)));
      await log.close();
      assert.deepEqual(chainIndexes(dir, NAME), [], 'no file whose records link to the lost ones');

      const again = open(dir, { writeMode, maxFileBytes: 1500 });
      const next = await again.append(intent(101)).catch(() => undefined);
      await again.close();
      // deleted files only: nothing reported altered, every acknowledged record missing in a declared gap
      const report = assertLostInGaps(
        dir,
        NAME,
        acked.map((r) => [r.seq, r.hash] as const),
      );
      assert.equal(report.ok, false, 'never a complete chain');
      assert.equal(report.lastSeq, next?.seq);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: the next file's size unreadable (EIO): refused, its handle closed, the chain goes on after a reopen`, async function () {
      const dir = tempDir();
      const log = open(dir, { writeMode, maxFileBytes: 1500 });
      const first = chainFile(dir, NAME, 1);
      for (let i = 0; !fs.existsSync(first) || fs.statSync(first).size < 1500; i++) await log.append(intent(i));
      // the next open hands out a handle whose fstat fails once; count the handles this writer closes
      const realOpen = fs.promises.open;
      let failing: fs.promises.FileHandle | undefined;
      let closed = false;
      fs.promises.open = async (...args: Parameters<typeof realOpen>) => {
        const fh = await realOpen(...args);
        if (failing || !String(args[0]).endsWith(chainFile(dir, NAME, 2))) return fh;
        failing = fh;
        const close = fh.close.bind(fh);
        Object.defineProperty(fh, 'stat', {
          configurable: true,
          value: () => Promise.reject(Object.assign(new Error('EIO: i/o error, fstat'), { code: 'EIO' })),
        });
        Object.defineProperty(fh, 'close', { configurable: true, value: () => ((closed = true), close()) });
        return fh;
      };
      try {
        await assert.rejects(log.append(intent(100)), /EIO/);
      } finally {
        fs.promises.open = realOpen;
      }
      assert.ok(failing, 'the next file was opened');
      assert.ok(closed, 'the handle whose size could not be read is closed, not left open until Node-RED exits');
      await log.close();

      await goesOnAfterReopen(dir, writeMode);
    });
  }
});
