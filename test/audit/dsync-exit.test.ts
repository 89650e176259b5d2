/**
 * A process that ends without closing its chain (nothing left to do, no close() called): an outcome whose append
 * resolved is in the file afterwards in every write mode. In 'datasync' and 'sync' it was written at once; in 'dsync'
 * it was held in memory for the next write, and the LAZY_SYNC_MS timer that writes it must keep the process alive
 * until it has (an unref()ed timer let the process end with the outcome in no file).
 */
import assert from 'assert';
import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';

import { AuditRecord } from '../../src/audit';
import { tsChildArgs } from '../support/ts-child';
import { actionFields, readChain, tempDir, verify } from './chain-support';

function runChild(dir: string, writeMode: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, tsChildArgs(path.join(__dirname, 'dsync-exit-child.ts'), [dir, writeMode]), {
    cwd: path.resolve(__dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('audit file chain: a process ending without close()', function () {
  for (const writeMode of ['datasync', 'dsync'] as const) {
    it(`${writeMode}: the outcome whose append resolved is in the file once the process has ended`, async function () {
      this.timeout(30000);
      const dir = tempDir();
      try {
        const { code, out } = await runChild(dir, writeMode);
        assert.equal(code, 0);
        assert.equal(out, 'appended\n');
        const text = readChain(dir, 'chain')
          .files.map((f) => f.text)
          .join('');
        const records = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as AuditRecord);
        const [intent, outcome] = actionFields(0);
        assert.deepEqual(
          records.map((r) => r.phase),
          ['file', 'intent', 'outcome'],
          'the file record, the intent and its outcome',
        );
        assert.equal((records[2] as { id: string }).id, (outcome as { id: string }).id);
        assert.equal((records[1] as { id: string }).id, (intent as { id: string }).id);
        // the checkpoint may lag (no close): the records verify
        const report = verify({ ...readChain(dir, 'chain'), checkpoint: undefined });
        assert.equal(report.firstBad, undefined, report.firstBad?.reason);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
