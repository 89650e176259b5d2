/** Each writeMode of the file chain (datasync, dsync, sync): an append resolves only with its record in the file, and the chain verifies. */
import assert from 'assert';
import fs from 'fs';

import { AuditLog, chainFile } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from './chain-support';

describe('audit file chain: write modes', function () {
  for (const writeMode of ['datasync', 'dsync', 'sync'] as const) {
    it(`${writeMode}: every acknowledged record is in the file when its append resolves; the chain verifies`, async function () {
      const dir = tempDir();
      try {
        const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode, maxFileBytes: 8 * 1024 });
        for (let i = 0; i < 30; i++) {
          const [intent, outcome] = actionFields(i);
          const record = await log.append(intent);
          const text = fs
            .readdirSync(dir)
            .filter((f) => f.endsWith('.jsonl'))
            .map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8'))
            .join('');
          assert.ok(text.includes(`${JSON.stringify(record)}\n`), `record #${record.seq} on disk when acknowledged`);
          void log.append(outcome);
        }
        await log.close();
        assert.ok(fs.existsSync(chainFile(dir, 'chain', 2)), 'rotated at least once');
        const report = verify(readChain(dir, 'chain'));
        assert.strictEqual(report.ok, true, report.firstBad?.reason);
        assert.strictEqual(report.checkpoint, 'verified');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('dsync: a write the disk takes only in part (a full disk, a signal) is finished; the chain verifies', async function () {
    const dir = tempDir();
    const probe = await fs.promises.open(`${dir}/probe`, 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<{ bytesWritten: number }> };
    await probe.close();
    const original = proto.write;
    let calls = 0;
    // at most 7 bytes a call, as write(2) may take less than it is given
    proto.write = function (this: unknown, buf: unknown, offset?: unknown, length?: unknown, ...rest: unknown[]) {
      if (!Buffer.isBuffer(buf)) return original.call(this, buf, offset, length, ...rest);
      calls++;
      const from = typeof offset === 'number' ? offset : 0;
      const size = typeof length === 'number' ? length : buf.length - from;
      return original.call(this, buf, from, Math.min(size, 7), ...rest);
    };
    try {
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode: 'dsync' });
      for (let i = 0; i < 5; i++) for (const fields of actionFields(i)) await log.append(fields);
      await log.close();
      assert.ok(calls > 10, `the records went through the short writes (${calls} calls)`);
      const report = verify(readChain(dir, 'chain'));
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
      assert.ok(report.records >= 10, `${report.records} records verified`);
    } finally {
      proto.write = original;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
