/**
 * Review finding: a poll node deleted from the flows "forgets" (its memory file is removed on close), but a save
 * queued before, or made on close (the node's close handler saves what the last pushed frames changed), landed after
 * the removal and brought the file back. The file of a deleted node then stayed in the user directory for good, and
 * a flow imported again with that node id (a project revert, a backup) started with its old memory: errors it had
 * never reported in that flow were taken as already reported. Now `remove()` waits for queued writes, and a write
 * asked for after it is dropped.
 */
import assert from 'node:assert/strict';
import fs from 'fs';
import os from 'os';
import path from 'path';

import fc from 'fast-check';

import { seenFile, seenFileStore } from '../../src/nodes/lh-error-poll/seen-file';

describe('review: the memory file of a deleted poll node stays deleted', function () {
  let dir: string;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-seen-rm-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('any saves before and after the removal, without waiting: no file is left', async function () {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 5 }), fc.nat({ max: 3 }), async (before, after) => {
        const store = seenFileStore(dir, 'gone');
        const done: Promise<unknown>[] = [];
        const save = (): void => {
          done.push(new Promise<void>((resolve) => store.set({ A: { seen: ['e1'] } }, () => resolve())));
        };
        for (let i = 0; i < before; i++) save();
        const removed = store.remove();
        for (let i = 0; i < after; i++) save();
        await Promise.all([removed, ...done]);
        assert.equal(fs.existsSync(seenFile(dir, 'gone')), false, 'the deleted node left its memory file');
        const folder = path.join(dir, 'lh-seen-errors');
        assert.deepEqual(fs.existsSync(folder) ? fs.readdirSync(folder) : [], [], 'nor a temporary file');
      }),
      { numRuns: 30 },
    );
  });
});
