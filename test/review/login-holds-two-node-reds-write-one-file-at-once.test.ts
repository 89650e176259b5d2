/**
 * Review finding (review83): login holds with two Node-REDs sharing one user directory. A rejection is kept in one
 * file per instrument and user name, holding each rejected password's hash: a save read the file, added its hold and
 * wrote it back. Two Node-RED processes keeping two wrong passwords of one user at once both read before either wrote,
 * and the second write lost the first's hold: that Node-RED sent its wrong password again after its next restart (a
 * crash-restart loop: once more per lost hold). And the folder's salt, made by one process, was replaced by another's
 * made a moment later: the holds kept under the first were never found again. Now a save or release reads and writes
 * the file under an exclusive lock file, and a salt already there is taken, never replaced (only a broken one is).
 *
 * Shown with real processes (a child paused between its read and its write, as a slow or descheduled Node-RED) and,
 * for the salt, two stores interleaved at the moment one process has written its salt and not yet put it in place.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { type LoginCredentials, LoginGate } from '../../src/client';
import { keptRejections } from '../../src/nodes/lh-server/kept-rejections';
import { Rng } from '../support/prng';
import { tsChildArgs } from '../support/ts-child';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;
const ROOT = path.resolve(__dirname, '..', '..');
const IDENTITY = 'https://lh.example';

const dirs: string[] = [];
function mkdir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-holds-race-'));
  dirs.push(dir);
  return dir;
}

/** Whether a fresh gate (a restarted Node-RED) on `userDir` holds these credentials back. */
function heldAfterRestart(userDir: string, creds: LoginCredentials): boolean {
  const gate = new LoginGate();
  gate.keepIn(keptRejections(userDir, IDENTITY));
  const turn = gate.turn(LoginGate.keyOf(creds.username, creds.password), Date.now(), creds);
  if (turn.go) turn.done();
  return !turn.go && 'held' in turn;
}

/** The children of the test under way: killed when it ends, however (one waiting for a file would keep mocha open). */
const children = new Set<ChildProcess>();

/**
 * A child Node-RED process keeping a rejection of `creds`; resolves words it prints as they come. `start`: it keeps
 * its hold once that file exists (loaded beforehand).
 */
function keeper(userDir: string, creds: LoginCredentials, mode: 'pause' | 'go', go: string, start = '') {
  const file = path.join(__dirname, 'login-holds-two-node-reds-write-one-file-at-once-child.ts');
  const args = [userDir, IDENTITY, creds.username, creds.password, mode, go, start];
  const child = spawn(process.execPath, tsChildArgs(file, args), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const words = new Set<string>();
  const waiting: { word: string; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    for (const word of chunk.split('\n').filter(Boolean)) words.add(word);
    for (const w of waiting.splice(0)) (words.has(w.word) ? w.resolve : () => waiting.push(w))();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const said = (word: string): Promise<void> =>
    words.has(word) ? Promise.resolve() : new Promise((resolve) => waiting.push({ word, resolve }));
  return { said, exited, kill: () => child.kill('SIGKILL') };
}

describe('review: login holds of two Node-REDs sharing one user directory, written at once', function () {
  this.timeout(30_000);
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
  });
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('one Node-RED slow between reading and writing the file, another keeps its hold meanwhile: both kept', async function () {
    const dir = mkdir();
    const go = path.join(dir, 'go');
    const slow = { username: 'operator', password: 'wrong-on-one' };
    const quick = { username: 'Operator', password: 'wrong-on-two' }; // one user name, however it is written
    // the folder and its salt exist (an earlier hold of another user): both go straight to the user's file
    assert.ok(!heldAfterRestart(dir, { username: 'other', password: 'x' }));
    keptRejections(dir, IDENTITY)?.save('k', { username: 'other', password: 'x' }, { state: 'login-failed', at: 1 });
    // both started before either keeps its hold: the other's start must not outlast the stale limit of the lock the
    // paused one holds (5 s; a child's start took a CI-like load 15 s, and the lock taken over as a dead one's lost a
    // hold: review84)
    const start = path.join(dir, 'start');
    const one = keeper(dir, slow, 'pause', go);
    const two = keeper(dir, quick, 'go', go, start);
    await two.said('ready');
    await one.said('paused'); // read the file (nothing of this user), its new content written aside
    fs.writeFileSync(start, '');
    // the other either finishes (nothing stops it) or finds the file locked (and then lets the paused one go on)
    await Promise.race([two.exited, two.said('blocked')]);
    fs.writeFileSync(go, '');
    assert.equal(await one.exited, 0);
    assert.equal(await two.exited, 0);
    assert.equal(heldAfterRestart(dir, slow), true, 'the slow Node-RED’s hold was kept');
    assert.equal(heldAfterRestart(dir, quick), true, 'the hold written meanwhile by the other Node-RED was lost');
  });

  it(`seed ${SEED}: a salt made by another Node-RED while this one makes its own is taken, not replaced`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const dir = mkdir();
      const user = `user-${rng.below(1000)}`;
      const first = { username: user, password: `first-${rng.below(1e9)}` };
      const second = { username: rng.below(2) === 0 ? user : `${user}-b`, password: `second-${rng.below(1e9)}` };
      const one = keptRejections(dir, IDENTITY);
      const two = keptRejections(dir, IDENTITY);
      assert.ok(one && two);
      // `one` found no salt and has written its own aside; `two` (another process) then makes one and keeps a hold
      const writeFileSync = fs.writeFileSync;
      let interleaved = false;
      (fs as { writeFileSync: unknown }).writeFileSync = (...args: Parameters<typeof fs.writeFileSync>): void => {
        writeFileSync(...args);
        if (!interleaved && /[/\\]salt\.[0-9a-f]+\.tmp$/.test(String(args[0]))) {
          interleaved = true;
          two.save(LoginGate.keyOf(second.username, second.password), second, { state: 'login-failed', at: 2 });
        }
      };
      try {
        one.save(LoginGate.keyOf(first.username, first.password), first, { state: 'login-failed', at: 1 });
      } finally {
        (fs as { writeFileSync: unknown }).writeFileSync = writeFileSync;
      }
      assert.ok(interleaved);
      assert.equal(heldAfterRestart(dir, first), true, `seed ${SEED} case ${c}: the first hold`);
      assert.equal(heldAfterRestart(dir, second), true, `seed ${SEED} case ${c}: the hold kept under the other salt`);
    }
  });
});
