import assert from 'node:assert/strict';
import fs from 'fs';
import os from 'os';
import path from 'path';

import fc from 'fast-check';

import { seenFile, seenFileStore } from '../../src/nodes/lh-error-poll/seen-file';
import { dialogDefaults, migrateConfig } from '../../src/nodes/shared/migrations';

describe('lh-error-poll: Remember on by default (issue 32 item 5)', function () {
  it('the dialog default is on; a node saved before (v2, Remember off by default then) gets it on; a missing one too', function () {
    assert.equal(dialogDefaults('lh-error-poll').persist, true);
    const v2 = migrateConfig({ id: 'p', type: 'lh-error-poll', version: 2, persist: false, store: '' });
    assert.equal(v2.persist, true);
    assert.equal(v2.version, 3);
    assert.equal(migrateConfig({ id: 'p', type: 'lh-error-poll' }).persist, true);
  });

  it('a node saved at v3 keeps what the user chose: unticked stays off', function () {
    assert.equal(migrateConfig({ id: 'p', type: 'lh-error-poll', version: 3, persist: false }).persist, false);
  });
});

describe('the memory file in the user directory (seen-file.ts)', function () {
  let dir: string;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-seen-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const get = (s: ReturnType<typeof seenFileStore>): Promise<unknown> =>
    new Promise((resolve, reject) => s.get((err, v) => (err ? reject(err) : resolve(v))));
  const set = (s: ReturnType<typeof seenFileStore>, v: unknown): Promise<void> =>
    new Promise((resolve, reject) => s.set(v, (err) => (err ? reject(err) : resolve())));

  it('nothing saved: undefined; saved: read back by a new store (a restart), owner-only, no temporary file left', async function () {
    assert.equal(await get(seenFileStore(dir, 'n1')), undefined);
    await set(seenFileStore(dir, 'n1'), { A: { seen: ['e1'] } });
    assert.deepEqual(await get(seenFileStore(dir, 'n1')), { A: { seen: ['e1'] } });
    assert.equal(fs.statSync(seenFile(dir, 'n1')).mode & 0o777, 0o600);
    assert.deepEqual(
      fs.readdirSync(path.dirname(seenFile(dir, 'n1'))).filter((f) => f.endsWith('.tmp')),
      [],
    );
    assert.equal(await get(seenFileStore(dir, 'n2')), undefined, 'another node has its own file');
  });

  it('any burst of saves without waiting: the last one is what a restart reads', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { minLength: 1, maxLength: 20 }), async (values) => {
        const store = seenFileStore(dir, 'burst');
        await Promise.all(values.map((v) => set(store, { v })));
        assert.deepEqual(await get(seenFileStore(dir, 'burst')), { v: values[values.length - 1] });
      }),
      { numRuns: 25 },
    );
  });

  it('a burst of saves of many nodes makes the directory once (issue 31: a mkdir per save was 7 % of the burst)', async function () {
    const made: string[] = [];
    const mkdir = fs.promises.mkdir;
    fs.promises.mkdir = (async (...args: Parameters<typeof mkdir>) => {
      made.push(String(args[0]));
      return mkdir(...args);
    }) as typeof mkdir;
    try {
      const stores = Array.from({ length: 20 }, (_, i) => seenFileStore(dir, `n${i}`));
      await Promise.all(stores.flatMap((s, i) => [set(s, { i }), set(s, { i, again: true })]));
      await Promise.all(stores.map((s, i) => set(s, { i, third: true })));
      assert.equal(made.length, 1, `mkdir calls: ${made.length}`);
      assert.deepEqual(await get(seenFileStore(dir, 'n7')), { i: 7, third: true });
    } finally {
      fs.promises.mkdir = mkdir;
    }
  });

  it('a directory removed while Node-RED runs is made again by the next save (no save lost)', async function () {
    const store = seenFileStore(dir, 'n1');
    await set(store, { v: 1 });
    fs.rmSync(path.dirname(seenFile(dir, 'n1')), { recursive: true, force: true });
    await set(store, { v: 2 });
    assert.deepEqual(await get(seenFileStore(dir, 'n1')), { v: 2 });
    await set(seenFileStore(dir, 'other'), { v: 3 });
    assert.deepEqual(await get(seenFileStore(dir, 'other')), { v: 3 });
  });

  it('a broken file is an error to report (the node warns), not a crash', async function () {
    fs.mkdirSync(path.dirname(seenFile(dir, 'bad')), { recursive: true });
    fs.writeFileSync(seenFile(dir, 'bad'), '{not json');
    await assert.rejects(get(seenFileStore(dir, 'bad')), SyntaxError);
  });
});
