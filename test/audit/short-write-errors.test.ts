/**
 * review12, over every writeMode (datasync and sync write with fs.writeSync on the main thread, dsync with
 * FileHandle.write through the thread pool): a write the disk takes only in part and then refuses (ENOSPC after a
 * short write), and a write that takes nothing at all (0 bytes, call after call).
 */
import assert from 'assert';
import fs from 'fs';

import { AuditLog } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from './chain-support';

type WriteMode = 'datasync' | 'dsync' | 'sync';
/** What a patched chain write does: `take` bytes of what it is given (the real write), or throw. */
type Fault = (call: number, asked: number) => { take: number } | { throw: NodeJS.ErrnoException };

/**
 * Patches the chain file's writes of `mode` (not the checkpoint's positional ones, nor anything else) with `fault`,
 * until the returned restore is called. Counts the patched calls.
 */
function patchChainWrites(mode: WriteMode, fault: Fault): { restore(): void; calls(): number } {
  let calls = 0;
  if (mode === 'dsync') {
    const proto = fileHandleProto();
    const original = proto.write;
    proto.write = function (this: unknown, buf: unknown, offset?: unknown, length?: unknown, ...rest: unknown[]) {
      if (!Buffer.isBuffer(buf)) return original.call(this, buf, offset, length, ...rest);
      const from = typeof offset === 'number' ? offset : 0;
      const size = typeof length === 'number' ? length : buf.length - from;
      const what = fault(++calls, size);
      if ('throw' in what) return Promise.reject(what.throw);
      if (what.take === 0) return Promise.resolve({ bytesWritten: 0, buffer: buf });
      return original.call(this, buf, from, Math.min(size, what.take), ...rest);
    };
    return { restore: () => void (proto.write = original), calls: () => calls };
  }
  const original = fs.writeSync;
  const patched = function (fd: number, buf: unknown, offset?: unknown, length?: unknown, position?: unknown): number {
    // the chain's writes append (position null); the checkpoint's are positional
    if (!Buffer.isBuffer(buf) || position !== null)
      return (original as (...a: unknown[]) => number)(fd, buf, offset, length, position);
    const from = typeof offset === 'number' ? offset : 0;
    const size = typeof length === 'number' ? length : buf.length - from;
    const what = fault(++calls, size);
    if ('throw' in what) throw what.throw;
    if (what.take === 0) return 0;
    return original(fd, buf, from, Math.min(size, what.take), null);
  };
  (fs as { writeSync: unknown }).writeSync = patched;
  return { restore: () => void ((fs as { writeSync: unknown }).writeSync = original), calls: () => calls };
}

let proto: { write: (...args: unknown[]) => Promise<{ bytesWritten: number; buffer?: unknown }> } | undefined;
function fileHandleProto(): NonNullable<typeof proto> {
  if (!proto) throw new Error('fileHandleProto: not prepared (before hook)');
  return proto;
}

function enospc(): NodeJS.ErrnoException {
  const err = new Error('ENOSPC: no space left on device, write') as NodeJS.ErrnoException;
  err.code = 'ENOSPC';
  return err;
}

describe('audit file chain: a write cut short, then refused; a write that takes nothing (review12)', function () {
  this.timeout(30000);
  before(async function () {
    const dir = tempDir();
    const h = await fs.promises.open(`${dir}/probe`, 'w');
    proto = Object.getPrototypeOf(h) as NonNullable<typeof proto>;
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: part of a batch written, then ENOSPC: the append is refused, a reopened chain goes on and verifies`, async function () {
      const dir = tempDir();
      try {
        const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode });
        const acknowledged: number[] = [];
        for (let i = 0; i < 3; i++) for (const fields of actionFields(i)) acknowledged.push((await log.append(fields)).seq);
        // the next write: 7 bytes taken, then the disk is full
        const patch = patchChainWrites(writeMode, (call) => (call === 1 ? { take: 7 } : { throw: enospc() }));
        let refused: Error | undefined;
        try {
          await log.append(actionFields(3)[0]).catch((err: Error) => (refused = err));
        } finally {
          patch.restore();
        }
        assert.ok(refused, 'the append whose write failed is refused');
        assert.match(refused.message, /ENOSPC/);
        await log.append(actionFields(4)[0]).then(
          () => assert.fail('a broken chain takes no more appends'),
          () => undefined,
        );
        await log.close();

        const again = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode });
        for (const fields of actionFields(5)) acknowledged.push((await again.append(fields)).seq);
        await again.close();
        const report = verify(readChain(dir, 'chain'));
        assert.strictEqual(report.ok, true, report.firstBad?.reason);
        assert.strictEqual(report.torn.length, 1, 'the 7 bytes stay, as a torn line (evidence)');
        const onDisk = readChain(dir, 'chain')
          .files.flatMap((f) => f.text.split('\n'))
          .filter((l) => l.endsWith('}'))
          .map((l) => (JSON.parse(l) as { seq: number }).seq);
        for (const seq of acknowledged) assert.ok(onDisk.includes(seq), `acknowledged record #${seq} in the chain`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it(`${writeMode}: a write that takes 0 bytes: the append is refused, not retried without end`, async function () {
      const dir = tempDir();
      try {
        const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode });
        await log.append(actionFields(0)[0]);
        // 0 bytes a call for 10,000 calls (a bound so that the test ends either way), then the real write
        const patch = patchChainWrites(writeMode, (call, asked) => ({ take: call <= 10_000 ? 0 : asked }));
        let outcome: string;
        try {
          outcome = await log.append(actionFields(0)[1]).then(
            () => 'acknowledged',
            (err: Error) => `refused: ${err.message}`,
          );
        } finally {
          patch.restore();
        }
        assert.ok(patch.calls() <= 10, `the write was given up after ${patch.calls()} calls taking nothing`);
        assert.match(outcome, /^refused: /);
        await log.close();
        const report = verify(readChain(dir, 'chain'));
        assert.strictEqual(report.ok, true, report.firstBad?.reason);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
