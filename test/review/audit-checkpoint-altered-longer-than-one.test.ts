/**
 * The checkpoint file found longer than a checkpoint when the chain is opened (altered: junk written over it, text
 * appended to it, a large file put in its place). The writer says so ("not a checkpoint (altered)") and writes a new
 * one, "and verify agrees with what was said from now on". It wrote the new one in place over the first 512 bytes and
 * left the rest: the file never parsed again, verify said TAMPERED ("the checkpoint file is not JSON") at every later
 * check, and every start said the checkpoint was altered again. What follows the new checkpoint must be cut.
 */
import assert from 'node:assert/strict';
import { constants } from 'buffer';
import fs from 'fs';

import { AuditLog, checkpointFile } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir, verify } from '../audit/chain-support';

const NAME = 'cp';

const ALTERED: Record<string, (file: string) => void> = {
  'junk over it': (file) => fs.writeFileSync(file, 'x'.repeat(1000)),
  'text appended to it': (file) => fs.appendFileSync(file, '{"seq":0}\n'.repeat(80)),
  'a file larger than a string in its place (sparse)': (file) => fs.truncateSync(file, constants.MAX_STRING_LENGTH + 1),
};

describe('audit: the checkpoint found longer than a checkpoint', function () {
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [how, alter] of Object.entries(ALTERED)) {
    it(`${how}: said once at the next start; from then on verify says OK and the start after says nothing`, async function () {
      dir = tempDir();
      const options = { dir, name: NAME, instrument: 'https://lh.example|', key: KEY };
      const first = new AuditLog(options);
      for (const f of actionFields(0)) await first.append(f);
      await first.close();
      alter(checkpointFile(dir, NAME));

      const said: string[] = [];
      for (let start = 1; start <= 2; start++) {
        const log = new AuditLog(options);
        log.on('checkpoint-missing', (text: string) => said.push(text));
        await log.append(actionFields(start)[0]);
        await log.close();
        const report = verify(readChain(dir, NAME), KEY);
        assert.equal(report.ok, true, `after start ${start}: ${report.firstBad?.reason ?? ''}`);
        assert.equal(report.checkpoint, 'verified', `after start ${start}`);
      }
      assert.equal(said.length, 1, said.join('\n'));
    });
  }
});
