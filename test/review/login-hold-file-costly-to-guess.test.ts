/**
 * Review finding (review80, a secret leaked): a rejected login kept across restarts was a file in the user directory
 * named by an unsalted sha256 of the instrument and LoginGate.keyOf (itself an unsalted sha256 of the user name and
 * password). Anyone who could read the user directory (a backup, a shared volume, a support bundle) could test guessed
 * passwords offline at GPU speed against the name, and the same credentials had the same name in every installation.
 * Now the file is named by a digest of a random salt kept in the folder, the instrument and the user name (no
 * password), and holds a memory-hard hash (scrypt under that salt) of each rejected password: the same credentials
 * give another name in another user directory, no fast digest of the password names a file or is in one, the hash is
 * paid once per credentials and start and only where a file is kept for the instrument and user (a fleet's other
 * instruments pay none), and a file of the earlier naming is ignored.
 *
 * And the folder attacked: a symlink to elsewhere, a file, read-only, a FIFO or a huge file in place of a hold, a
 * corrupt salt, two Node-RED processes sharing the folder: never a throw into the login, never a write outside the
 * folder, never a blocked read. Drawn over user names, passwords and instruments; seed printed, LH_SEED / LH_CASES.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { LhError, type LoginCredentials, LoginGate } from '../../src/client';
import { HOLDS_DIR, keptRejections } from '../../src/nodes/lh-server/kept-rejections';
import { Rng } from '../support/prng';

const scryptSync = crypto.scryptSync;
const cryptoMutable = crypto as { scryptSync: typeof scryptSync };

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

const rejection = (): LhError =>
  new LhError('login rejected (401)', { kind: 'auth', statusCode: 401, operation: 'authenticate' });

/** A gate keeping rejections in `userDir` for `identity`, the credentials rejected once through it; the gate returned. */
function reject(userDir: string, identity: string, creds: LoginCredentials): LoginGate {
  const gate = new LoginGate();
  gate.keepIn(keptRejections(userDir, identity));
  const key = LoginGate.keyOf(creds.username, creds.password);
  const turn = gate.turn(key, Date.now(), creds);
  assert.equal(turn.go, true);
  if (turn.go) turn.done(rejection(), 'login-failed');
  return gate;
}

/** Whether a fresh gate (a restarted Node-RED) on `userDir` holds these credentials back. */
function heldAfterRestart(userDir: string, identity: string, creds: LoginCredentials): boolean {
  const gate = new LoginGate();
  gate.keepIn(keptRejections(userDir, identity));
  const turn = gate.turn(LoginGate.keyOf(creds.username, creds.password), Date.now(), creds);
  if (turn.go) turn.done();
  return !turn.go && 'held' in turn;
}

const holdNames = (userDir: string): string[] => fs.readdirSync(path.join(userDir, HOLDS_DIR)).filter((n) => n.endsWith('.json'));

function drawCredentials(rng: Rng): { identity: string; creds: LoginCredentials } {
  const word = (n: number): string =>
    Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!é_'[rng.below(65)]).join('');
  return {
    identity: `https://lh-${word(5).toLowerCase()}.example:${rng.int(1024, 65535)}`,
    creds: { username: word(rng.int(1, 12)), password: word(rng.int(0, 24)) },
  };
}

describe('review: a kept login rejection costs a memory-hard hash per guessed password', function () {
  this.timeout(15000);
  const dirs: string[] = [];
  const mkdir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-hold-'));
    dirs.push(d);
    return d;
  };
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));
  afterEach(() => {
    cryptoMutable.scryptSync = scryptSync;
    for (const d of dirs.splice(0)) {
      try {
        fs.chmodSync(d, 0o700);
      } catch {
        // gone already
      }
      fs.rmSync(d, { recursive: true, force: true });
    }
  });

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const { identity, creds } = drawCredentials(rng);
    it(`case ${c}: no fast digest names the file, another user directory another name, held after restart`, function () {
      const a = mkdir();
      const b = mkdir();
      reject(a, identity, creds);
      reject(b, identity, creds);
      const [nameA] = holdNames(a);
      const [nameB] = holdNames(b);
      assert.ok(nameA && nameB, 'no rejection kept');
      // salted: precomputed tables of names are of no use, each installation is guessed on its own
      assert.notEqual(nameA, nameB, 'the same credentials have the same file name in two user directories');
      // no fast digest of the credentials names the file or is in it (the earlier naming, the gate's key)
      const key = LoginGate.keyOf(creds.username, creds.password);
      const fast = [
        crypto
          .createHash('sha256')
          .update(JSON.stringify(['lh-login-hold', identity, key]))
          .digest('hex')
          .slice(0, 40),
        key,
        Buffer.from(key, 'base64url').toString('hex'),
      ];
      for (const dir of [a, b])
        for (const n of fs.readdirSync(path.join(dir, HOLDS_DIR))) {
          const text = fs.readFileSync(path.join(dir, HOLDS_DIR, n), 'utf8');
          for (const f of fast) {
            assert.ok(!n.includes(f) && !text.includes(f), `${n} is named by or holds a fast digest of the password`);
          }
          if (creds.password.length >= 4) assert.ok(!text.includes(creds.password) && !n.includes(creds.password));
          if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(dir, HOLDS_DIR, n)).mode & 0o077, 0);
        }
      if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(a, HOLDS_DIR)).mode & 0o077, 0);
      // still does its work: held after a restart, another password or user name is not
      assert.equal(heldAfterRestart(a, identity, creds), true, 'not held after a restart');
      assert.equal(heldAfterRestart(a, identity, { ...creds, password: `${creds.password}x` }), false);
      assert.equal(heldAfterRestart(a, `${identity}/other`, creds), false);
      // the instrument finds a user in any letter case: so does the hold
      assert.equal(heldAfterRestart(a, identity, { ...creds, username: creds.username.toUpperCase() }), true);
    });
  }

  it('the hash is paid once per credentials and start, not per login; released by Test connection', function () {
    const dir = mkdir();
    const creds = { username: 'operator', password: 'wrong-one' };
    const key = LoginGate.keyOf(creds.username, creds.password);
    let calls = 0;
    cryptoMutable.scryptSync = (...args: Parameters<typeof scryptSync>) => {
      calls++;
      return scryptSync(...args);
    };
    const gate = reject(dir, 'https://lh.example', creds);
    for (let i = 0; i < 20; i++) assert.equal(gate.turn(key, Date.now(), creds).go, false);
    gate.release(key, creds);
    assert.equal(holdNames(dir).length, 0, 'Test connection left the hold');
    assert.equal(calls, 1, `${calls} scrypt hashes for one key`);
  });

  it('a fleet: the first logins of instruments and users with nothing kept pay no hash (each costs 25–50 ms)', function () {
    const dir = mkdir();
    const creds = { username: 'operator', password: 'wrong-one' };
    reject(dir, 'https://lh-0.example', creds); // a salt and one hold in the folder
    let calls = 0;
    cryptoMutable.scryptSync = (...args: Parameters<typeof scryptSync>) => {
      calls++;
      return scryptSync(...args);
    };
    for (let i = 1; i <= 200; i++) assert.equal(heldAfterRestart(dir, `https://lh-${i}.example`, creds), false);
    assert.equal(heldAfterRestart(dir, 'https://lh-0.example', { ...creds, username: 'other' }), false);
    assert.equal(calls, 0, `${calls} scrypt hashes for instruments and users with nothing kept`);
    assert.equal(heldAfterRestart(dir, 'https://lh-0.example', creds), true);
    assert.equal(calls, 1);
  });

  it('several wrong passwords of one user are each held; a release lets only its own go', function () {
    const dir = mkdir();
    const identity = 'https://lh.example';
    const passwords = Array.from({ length: 3 }, (_, i) => ({ username: 'operator', password: `wrong-${i}` }));
    for (const creds of passwords) reject(dir, identity, creds);
    for (const creds of passwords) assert.equal(heldAfterRestart(dir, identity, creds), true, creds.password);
    const gate = new LoginGate();
    gate.keepIn(keptRejections(dir, identity));
    const [first, ...rest] = passwords;
    gate.release(LoginGate.keyOf(first.username, first.password), first);
    assert.equal(heldAfterRestart(dir, identity, first), false, 'the released password is still held');
    for (const creds of rest) assert.equal(heldAfterRestart(dir, identity, creds), true, `${creds.password} let go`);
  });

  it('a file of the earlier naming is ignored (the login goes)', function () {
    const dir = mkdir();
    const identity = 'https://lh.example';
    const creds = { username: 'operator', password: 'wrong-one' };
    const key = LoginGate.keyOf(creds.username, creds.password);
    const old = crypto
      .createHash('sha256')
      .update(JSON.stringify(['lh-login-hold', identity, key]))
      .digest('hex')
      .slice(0, 40);
    fs.mkdirSync(path.join(dir, HOLDS_DIR), { mode: 0o700 });
    fs.writeFileSync(path.join(dir, HOLDS_DIR, `${old}.json`), JSON.stringify({ state: 'login-failed', statusCode: 401, at: 1 }));
    assert.equal(heldAfterRestart(dir, identity, creds), false);
  });

  it('the folder a symlink to elsewhere: nothing written there, nothing read from there, the login goes', function () {
    const dir = mkdir();
    const elsewhere = mkdir();
    fs.symlinkSync(elsewhere, path.join(dir, HOLDS_DIR));
    const creds = { username: 'operator', password: 'wrong-one' };
    reject(dir, 'https://lh.example', creds);
    assert.deepEqual(fs.readdirSync(elsewhere), [], 'written outside the user directory');
    assert.equal(heldAfterRestart(dir, 'https://lh.example', creds), false);
  });

  it('the folder a file, read-only, or its salt corrupt: no throw into the login', function () {
    const creds = { username: 'operator', password: 'wrong-one' };
    const asFile = mkdir();
    fs.writeFileSync(path.join(asFile, HOLDS_DIR), 'not a folder');
    const gate = reject(asFile, 'https://lh.example', creds);
    assert.equal(gate.turn(LoginGate.keyOf(creds.username, creds.password), Date.now(), creds).go, false, 'held in memory');
    assert.equal(heldAfterRestart(asFile, 'https://lh.example', creds), false);

    const readOnly = mkdir();
    fs.chmodSync(readOnly, 0o500);
    reject(readOnly, 'https://lh.example', creds);
    const held = heldAfterRestart(readOnly, 'https://lh.example', creds); // root writes all the same
    if (process.getuid?.() !== 0) assert.equal(held, false);

    const corrupt = mkdir();
    fs.mkdirSync(path.join(corrupt, HOLDS_DIR), { mode: 0o700 });
    fs.writeFileSync(path.join(corrupt, HOLDS_DIR, 'salt'), 'cut sho');
    reject(corrupt, 'https://lh.example', creds);
    assert.equal(heldAfterRestart(corrupt, 'https://lh.example', creds), true, 'a corrupt salt never lets a hold be kept');
  });

  it('a FIFO, a symlink to a device or a huge file in place of a hold: not read, the login goes', function () {
    if (process.platform === 'win32') this.skip();
    const creds = { username: 'operator', password: 'wrong-one' };
    const dir = mkdir();
    reject(dir, 'https://lh.example', creds);
    const [name] = holdNames(dir);
    const file = path.join(dir, HOLDS_DIR, name);
    fs.rmSync(file);
    execFileSync('mkfifo', [file]);
    assert.equal(heldAfterRestart(dir, 'https://lh.example', creds), false);
    fs.rmSync(file);
    fs.symlinkSync('/dev/zero', file);
    assert.equal(heldAfterRestart(dir, 'https://lh.example', creds), false);
    fs.rmSync(file);
    fs.writeFileSync(file, `{"state":"login-failed","at":1,"pad":"${'x'.repeat(1 << 20)}"}`);
    assert.equal(heldAfterRestart(dir, 'https://lh.example', creds), false);
  });

  it('two Node-RED processes sharing the user directory see each other’s holds (one salt)', function () {
    const dir = mkdir();
    const one = { username: 'operator', password: 'wrong-one' };
    const two = { username: 'operator', password: 'wrong-two' };
    // both look before either writes (a salt made by each would lose the other's holds)
    const g1 = new LoginGate();
    const g2 = new LoginGate();
    g1.keepIn(keptRejections(dir, 'https://lh.example'));
    g2.keepIn(keptRejections(dir, 'https://lh.example'));
    const t1 = g1.turn(LoginGate.keyOf(one.username, one.password), Date.now(), one);
    const t2 = g2.turn(LoginGate.keyOf(two.username, two.password), Date.now(), two);
    assert.ok(t1.go && t2.go);
    if (t1.go) t1.done(rejection(), 'login-failed');
    if (t2.go) t2.done(rejection(), 'login-failed');
    assert.equal(heldAfterRestart(dir, 'https://lh.example', one), true);
    assert.equal(heldAfterRestart(dir, 'https://lh.example', two), true);
  });
});
