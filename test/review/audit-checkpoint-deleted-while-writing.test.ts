/**
 * The checkpoint is what shows a tail removed from a chain's end. The writer kept it open and rewrote it in place: a
 * checkpoint deleted (or moved, or replaced by an older copy) while Node-RED ran was written into a file no name led
 * to, so the chain had no checkpoint (or a stale one) from then on, and its tail could be cut unseen until a restart,
 * which made a new checkpoint from what was left. The writer now finds the checkpoint's path no longer naming the
 * file it writes and makes it again there, naming the last record made durable.
 */
import assert from 'assert';
import fs from 'fs';

import { AuditLog, checkpointFile } from '../../src/audit';
import { actionFields, checkpointSeq, KEY, readChain, tempDir, verify } from '../audit/chain-support';

describe('review: audit checkpoint deleted, moved or replaced while the writer runs', function () {
  let dir: string;
  beforeEach(function () {
    dir = tempDir();
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const how of ['deleted', 'moved', 'replaced by an older copy'] as const) {
    it(`${how}: the next checkpoint is at its path again, and a tail cut after it is found`, async function () {
      const log = new AuditLog({ dir, name: 'c', instrument: 'https://lh.example|', key: KEY, fsync: false });
      for (let i = 0; i < 3; i++) for (const f of actionFields(i)) await log.append(f);
      const cp = checkpointFile(dir, 'c');
      const older = fs.readFileSync(cp, 'utf8');
      for (const f of actionFields(3)) await log.append(f);
      if (how === 'deleted') fs.rmSync(cp);
      else if (how === 'moved') fs.renameSync(cp, `${cp}.away`);
      else {
        fs.rmSync(cp);
        fs.writeFileSync(cp, older);
      }
      const last = [];
      for (let i = 4; i < 6; i++) for (const f of actionFields(i)) last.push(await log.append(f));
      await log.close();
      assert.strictEqual(checkpointSeq(dir, 'c'), last[last.length - 1].seq, 'the checkpoint names the last record');
      // someone cuts the last two records off while nobody writes: found
      const chain = readChain(dir, 'c');
      const file = chain.files[chain.files.length - 1];
      const lines = file.text.split('\n').slice(0, -3);
      const cut = { ...chain, files: [...chain.files.slice(0, -1), { ...file, text: `${lines.join('\n')}\n` }] };
      const report = verify(cut);
      assert.strictEqual(report.ok, false);
      assert.match(report.firstBad?.reason ?? '', /removed from the end/);
    });
  }
});
