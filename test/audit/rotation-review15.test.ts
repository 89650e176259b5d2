/**
 * review15: the file a chain moves on from, checked once the next file exists (handleFor). What the failure paths
 * leave behind: no empty chain file that stops the reopen, and every way a chain goes on in a new file at once (a
 * declared gap included) checks the file it leaves.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { AuditLog, AuditRecord, chainFile, chainIndexes } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from './chain-support';

const NAME = 'chain';

function open(dir: string, options: { maxFileBytes?: number; writeMode?: 'datasync' | 'dsync' | 'sync' } = {}): AuditLog {
  return new AuditLog({ dir, name: NAME, instrument: 'https://lh.example|', key: KEY, ...options });
}

function intent(i: number): ReturnType<typeof actionFields>[0] {
  return actionFields(i)[0];
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

      const again = open(dir, { writeMode, maxFileBytes: 1500 });
      const next = await again.append(intent(101));
      await again.close();
      const report = verify(readChain(dir, NAME));
      assert.equal(report.firstBad, undefined, report.firstBad?.reason);
      assert.equal(report.lastSeq, next.seq);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});
