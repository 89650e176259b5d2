/**
 * The disk full when a writer takes the chain's lock (a deploy or a restart while the disk is full): the lock file is
 * made, its text is not written (ENOSPC). Left so, empty, it named no writer: once space was back every redeploy and
 * restart was refused ("locked by a lock file that names no writer … remove the lock file"), until a person came.
 * The writer must remove the lock it made and could not write: refused while the disk is full, going on once it is not.
 */
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import { AuditLog } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from '../audit/chain-support';

const NAME = 'full';

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

/** A disk with no space for the lock file's text (the file itself is made: an inode, no block), until restored. */
function fullDiskForLock(lock: string): () => void {
  const { writeSync, writeFileSync } = fs;
  const isLock = (fd: number): boolean => fs.existsSync(lock) && fs.fstatSync(fd).ino === fs.statSync(lock).ino;
  (fs as { writeSync: unknown }).writeSync = (fd: number, ...rest: unknown[]): number => {
    if (isLock(fd)) throw enospc();
    return (writeSync as (...a: unknown[]) => number)(fd, ...rest);
  };
  (fs as { writeFileSync: unknown }).writeFileSync = (file: unknown, ...rest: unknown[]): void => {
    if (file !== lock) return (writeFileSync as (...a: unknown[]) => void)(file, ...rest);
    const options = rest[1] as { flag?: string } | undefined;
    fs.closeSync(fs.openSync(lock, options?.flag ?? 'w', 0o600)); // made, as the real one makes it; then the write fails
    throw enospc();
  };
  return () => {
    (fs as { writeSync: unknown }).writeSync = writeSync;
    (fs as { writeFileSync: unknown }).writeFileSync = writeFileSync;
  };
}

describe('audit: the disk full when the chain lock is taken', function () {
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refused while full; no empty lock left; once space is back the next start writes and the chain verifies', async function () {
    dir = tempDir();
    const options = { dir, name: NAME, instrument: 'https://lh.example|', key: KEY };
    const first = new AuditLog(options);
    await first.append(actionFields(0)[0]);
    await first.close();

    const lock = path.join(dir, `${NAME}.lock`);
    const restore = fullDiskForLock(lock);
    try {
      const full = new AuditLog(options);
      await assert.rejects(full.append(actionFields(1)[0]), /ENOSPC/);
      await full.close();
    } finally {
      restore();
    }
    assert.equal(fs.existsSync(lock), false, 'the lock made and not written is not left behind');

    const next = new AuditLog(options);
    const written = await next.append(actionFields(2)[0]);
    await next.close();
    const report = verify(readChain(dir, NAME), KEY);
    assert.equal(report.ok, true, report.firstBad?.reason);
    assert.equal(report.lastSeq, written.seq);
  });
});
