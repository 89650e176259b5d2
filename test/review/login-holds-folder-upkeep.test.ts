/**
 * Review finding (fix86, item 2): the upkeep of the kept login holds (`<userDir>/lh-login-holds/`).
 * - A Node-RED killed between a hold's write and its rename left `<file>.<random>.tmp` behind for ever: each such
 *   kill one more file (a crash-restart loop: one a start). Now a `.tmp` older than a minute is pruned at a save.
 * - A folder made with looser modes (by an older version, by hand, a restored backup: 0755 and 0644 files) stayed so:
 *   every user of the machine could read the hashes. Now the folder is tightened to 0700 and its files to 0600.
 * - Files of credentials changed since were pruned only past 200 files: a hold of a password corrected long ago stayed
 *   for ever. Now a hold file not written for 30 days is pruned at the next save.
 * - Two Node-REDs finding one stale lock at once: the second deleted the lock the first had made meanwhile, and both
 *   read, changed and wrote the file together. Now the takeover is a rename of the stale lock itself, which only one
 *   can do; the other puts back the live lock it moved and waits.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { type LoginCredentials, LoginGate } from '../../src/client';
import { HOLDS_DIR, keptRejections, MAX_HOLD_FILE_AGE_MS, STALE_TMP_MS } from '../../src/nodes/lh-server/kept-rejections';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;
const IDENTITY = 'https://lh.example';
const DAY = 24 * 3_600_000;

const dirs: string[] = [];
function userDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-holds-upkeep-'));
  dirs.push(dir);
  return dir;
}

const kept = { state: 'login-failed', statusCode: 401, at: Date.now() };
const creds = (n: number): LoginCredentials => ({ username: `user${n}`, password: `wrong-${n}` });
function save(dir: string, c: LoginCredentials): void {
  keptRejections(dir, IDENTITY)?.save(LoginGate.keyOf(c.username, c.password), c, kept);
}
const mode = (file: string): number => fs.lstatSync(file).mode & 0o777;
const ago = (file: string, ms: number): void => {
  const t = new Date(Date.now() - ms);
  fs.utimesSync(file, t, t);
};

describe(`review: the upkeep of the kept login holds (seed ${SEED}, ${CASES} cases)`, function () {
  this.timeout(15000);
  after(function () {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('.tmp files older than a minute are pruned at a save; a younger one (a write under way) is left', function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const dir = userDir();
      save(dir, creds(0));
      const holds = path.join(dir, HOLDS_DIR);
      const left = Array.from({ length: rng.int(1, 5) }, (_, i) => {
        const name = path.join(holds, `${'a'.repeat(40)}.json.${i}0000${c}.tmp`);
        fs.writeFileSync(name, '{"holds":[]}\n', { mode: 0o600 });
        const age = rng.int(0, 1) === 0 ? rng.int(0, STALE_TMP_MS - 5000) : STALE_TMP_MS + rng.int(1000, 10 * DAY);
        ago(name, age);
        return { name, stale: age > STALE_TMP_MS };
      });
      save(dir, creds(1));
      for (const { name, stale } of left)
        assert.equal(fs.existsSync(name), !stale, `seed ${SEED} case ${c}: ${path.basename(name)} stale=${stale}`);
    }
  });

  it('a folder with loose modes is tightened to 0700 and its files to 0600 at the first use', function () {
    if (process.platform === 'win32') this.skip();
    const dir = userDir();
    save(dir, creds(0));
    const holds = path.join(dir, HOLDS_DIR);
    fs.chmodSync(holds, 0o755);
    for (const n of fs.readdirSync(holds)) fs.chmodSync(path.join(holds, n), 0o644);
    // a restart: the first login reads the folder
    const gate = new LoginGate();
    gate.keepIn(keptRejections(dir, IDENTITY));
    const c = creds(0);
    const turn = gate.turn(LoginGate.keyOf(c.username, c.password), Date.now(), c);
    assert.equal(turn.go, false, 'the hold still holds');
    assert.equal(mode(holds), 0o700);
    for (const n of fs.readdirSync(holds)) assert.equal(mode(path.join(holds, n)), 0o600, n);
  });

  it('hold files not written for 30 days are pruned at the next save; younger ones stay', function () {
    const rng = new Rng(SEED + 1);
    const dir = userDir();
    const holds = path.join(dir, HOLDS_DIR);
    const files: { name: string; old: boolean }[] = [];
    for (let i = 0; i < 2 + CASES; i++) {
      const before = new Set(fs.existsSync(holds) ? fs.readdirSync(holds) : []);
      save(dir, creds(10 + i));
      const name = fs.readdirSync(holds).find((n) => n.endsWith('.json') && !before.has(n));
      assert.ok(name);
      files.push({ name: path.join(holds, name), old: false });
    }
    for (const f of files) {
      f.old = rng.int(0, 1) === 1;
      ago(f.name, f.old ? MAX_HOLD_FILE_AGE_MS + rng.int(1, 30) * DAY : rng.int(0, 29) * DAY);
    }
    save(dir, creds(99));
    for (const f of files) assert.equal(fs.existsSync(f.name), !f.old, `seed ${SEED}: ${path.basename(f.name)} old=${f.old}`);
  });

  it('a lock moved aside by a Node-RED killed in its takeover is pruned after a minute; a younger one is left', function () {
    const dir = userDir();
    save(dir, creds(0));
    const holds = path.join(dir, HOLDS_DIR);
    const old = path.join(holds, `${'b'.repeat(40)}.json.lock.0123456789ab.stale`);
    const young = path.join(holds, `${'c'.repeat(40)}.json.lock.0123456789ab.stale`);
    for (const f of [old, young]) fs.writeFileSync(f, '', { mode: 0o600 });
    ago(old, STALE_TMP_MS + 5000);
    save(dir, creds(1));
    assert.equal(fs.existsSync(old), false, 'left aside for ever');
    assert.equal(fs.existsSync(young), true, 'a takeover under way');
  });

  it('a hold written into an old file while a save prunes it is kept (review90)', function () {
    // Node-RED A's save lists the folder and finds the file of creds(6) not written for 30 days; before A removes
    // it, Node-RED B keeps a new rejection of creds(6) in it: that hold, just written, must not go with the old file
    const dir = userDir();
    save(dir, creds(0));
    const holds = path.join(dir, HOLDS_DIR);
    const names = new Set(fs.readdirSync(holds));
    save(dir, creds(6));
    const target = path.join(holds, fs.readdirSync(holds).find((n) => !names.has(n) && n.endsWith('.json')) ?? '');
    ago(target, MAX_HOLD_FILE_AGE_MS + DAY);
    const realLstat = fs.lstatSync;
    let bSaved = false;
    const writable = fs as { lstatSync: typeof fs.lstatSync };
    writable.lstatSync = ((p: fs.PathLike, ...rest: unknown[]) => {
      const seen = (realLstat as (p: fs.PathLike, ...r: unknown[]) => fs.Stats)(p, ...rest);
      if (String(p) === target && !bSaved) {
        bSaved = true;
        save(dir, creds(6)); // B, between A's look and A's removal
      }
      return seen;
    }) as typeof fs.lstatSync;
    try {
      save(dir, creds(7)); // A
    } finally {
      writable.lstatSync = realLstat;
    }
    assert.ok(bSaved, "B saved during A's prune");
    const c = creds(6);
    const store = keptRejections(dir, IDENTITY);
    assert.ok(store?.load(LoginGate.keyOf(c.username, c.password), c), "B's hold is kept");
  });

  it('two Node-REDs taking over one stale lock at once: only one holds it, the other waits', function () {
    const dir = userDir();
    save(dir, creds(0)); // the folder and its salt
    const holds = path.join(dir, HOLDS_DIR);
    const names = new Set(fs.readdirSync(holds));
    save(dir, creds(4));
    const target = fs.readdirSync(holds).find((n) => !names.has(n) && n.endsWith('.json'));
    assert.ok(target, 'the file of creds(4)');
    // its lock, left by a Node-RED that died holding it
    const stale = path.join(holds, `${target}.lock`);
    fs.writeFileSync(stale, '', { mode: 0o600 });
    ago(stale, 60_000);

    // Node-RED B looks at the stale lock at the same moment as A, and takes it over first: between A's look and A's
    // takeover, B's own lock is in place and B is reading, changing and writing the file.
    const realLstat = fs.lstatSync;
    let bLock: fs.Stats | undefined;
    let bLooked = false;
    const lstat = ((p: fs.PathLike, ...rest: unknown[]) => {
      const seen = (realLstat as (p: fs.PathLike, ...r: unknown[]) => fs.Stats)(p, ...rest);
      if (String(p) === stale && !bLooked) {
        bLooked = true;
        fs.unlinkSync(stale);
        fs.writeFileSync(stale, '', { flag: 'wx', mode: 0o600 });
        bLock = realLstat(stale);
      }
      return seen;
    }) as typeof fs.lstatSync;
    const writable = fs as { lstatSync: typeof fs.lstatSync };
    writable.lstatSync = lstat;
    let aSaved = false;
    try {
      save(dir, creds(4));
      aSaved = true;
    } catch (err) {
      assert.match(String(err), /held by another Node-RED/);
    } finally {
      writable.lstatSync = realLstat;
    }
    assert.ok(bLock, 'B took the lock over');
    assert.equal(aSaved, false, 'A did not write the file while B held its lock');
    const now = realLstat(stale);
    assert.equal(now.ino, bLock.ino, "B's lock is still in place: A did not delete it");
    assert.deepEqual(
      fs.readdirSync(holds).filter((n) => n.endsWith('.stale')),
      [],
      'nothing left aside',
    );
  });
});
