/**
 * Review finding (review90, on fix86 item 2): the lock of a kept login hold file, taken over when stale, modelled
 * over drawn interleavings of two Node-REDs saving into one hold file (the real store, each in a worker thread that
 * stops before each of its file operations in the folder: test/support/lock-step-worker.ts). The scheduler lets one
 * saver run a drawn number of operations, then another (seeded: LH_SEED replays, LH_CASES draws more).
 *
 * Invariants, whatever the interleaving: never two savers holding the lock at once; with no crash, both saves land
 * (each one's hold is there after), no lock is left behind (a lock nobody holds blocks every save of that file for
 * 5 s: the rejection is then held in memory only and a restarted Node-RED sends that password again), nothing is left
 * aside. With a crash drawn at any operation of one saver: still never two holders, and the other saver's save lands
 * or fails with "held by another Node-RED" (never hangs).
 *
 * Found: a saver taking over a stale lock moved aside a live lock (made meanwhile by the other saver's takeover), and
 * linked it back after its holder had given it up (that holder found no lock to remove): a lock nobody held, so the
 * taker's own save failed after a second and every save of that file for 5 s.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

import { LoginGate } from '../../src/client';
import { holdName, HOLDS_DIR, keptRejections } from '../../src/nodes/lh-server/kept-rejections';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;
const IDENTITY = 'https://lh.example';
const WORKER = path.join(__dirname, '..', 'support', 'lock-step-worker.ts');
const [RUN, WAIT, DONE, NEXT, HOLDING] = [0, 1, 2, 4, 8];

const dirs: string[] = [];
after(function () {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

interface Saver {
  password: string;
  crashAt?: number;
}
interface Outcome {
  ok: boolean;
  error?: string;
  crashed?: boolean;
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** Two savers of one user's holds (one file) with a stale lock in place, interleaved as `rng` draws. */
/** Which waiting saver goes next (a directed schedule); undefined: as drawn. */
type Pick = (ready: number[], state: Int32Array) => number | undefined;

async function race(
  rng: Rng,
  savers: Saver[],
  pick?: Pick,
): Promise<{ dir: string; file: string; outcomes: Outcome[]; twoHolders: string[] }> {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-holds-race-'));
  dirs.push(userDir);
  const first = { username: 'someone-else', password: 'x' };
  keptRejections(userDir, IDENTITY)?.save(LoginGate.keyOf(first.username, first.password), first, {
    state: 'login-failed',
    at: Date.now(),
  }); // the folder and its salt
  const holdsDir = path.join(userDir, HOLDS_DIR);
  const salt = fs.readFileSync(path.join(holdsDir, 'salt'), 'utf8').trim();
  const file = path.join(holdsDir, holdName(salt, IDENTITY, { username: 'operator', password: '' }));
  const lock = `${file}.lock`;
  fs.writeFileSync(lock, '', { mode: 0o600 }); // left by a Node-RED that died holding it
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(lock, old, old);

  const control = new SharedArrayBuffer(4 * 16);
  const state = new Int32Array(control);
  const workers = savers.map(
    (s, index) =>
      new Worker(`require('ts-node/register/transpile-only'); require(${JSON.stringify(WORKER)});`, {
        eval: true,
        workerData: {
          ...{ control, index, userDir, holdsDir, identity: IDENTITY, username: 'operator', ...s },
          key: LoginGate.keyOf('operator', s.password),
        },
      }),
  );
  const outcomes = workers.map(
    (w) =>
      new Promise<Outcome>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      }),
  );
  const exited = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
  const settled = (i: number): boolean => Atomics.load(state, i) !== RUN;
  const twoHolders: string[] = [];
  try {
    const started = Date.now();
    while (!savers.every((_, i) => settled(i))) {
      if (Date.now() - started > 20_000) throw new Error('the savers did not start');
      await tick();
    }
    let current = 0;
    let left = 0;
    for (let step = 0; step < 50_000; step++) {
      const ready = savers.map((_, i) => i).filter((i) => Atomics.load(state, i) === WAIT);
      if (ready.length === 0) break;
      const picked = pick?.(ready, state);
      if (picked !== undefined) {
        current = picked;
        left = 0;
      } else if (left <= 0 || !ready.includes(current)) {
        current = ready[rng.below(ready.length)];
        left = rng.int(1, 12);
      }
      left--;
      Atomics.store(state, current, RUN);
      Atomics.notify(state, current);
      while (Atomics.load(state, current) === RUN) Atomics.wait(state, current, RUN, 100);
      const holders = savers.filter((_, i) => Atomics.load(state, HOLDING + i) === 1).length;
      if (holders > 1) twoHolders.push(`step ${step}`);
    }
    assert.ok(
      savers.every((_, i) => Atomics.load(state, i) === DONE),
      'every saver ended',
    );
    return { dir: userDir, file, outcomes: await Promise.all(outcomes), twoHolders };
  } finally {
    for (const w of workers) {
      Atomics.store(state, workers.indexOf(w), DONE);
      Atomics.notify(state, workers.indexOf(w));
    }
    await Promise.all(exited);
  }
}

const loaded = (dir: string, password: string): boolean => {
  const c = { username: 'operator', password };
  return keptRejections(dir, IDENTITY)?.load(LoginGate.keyOf(c.username, c.password), c) !== undefined;
};

describe(`review: two Node-REDs saving into one hold file, interleaved (seed ${SEED}, ${CASES} cases)`, function () {
  this.timeout(60_000);

  it('never two holders; both saves land; no lock left behind and nothing left aside', async function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const { dir, file, outcomes, twoHolders } = await race(rng, [{ password: 'wrong-a' }, { password: 'wrong-b' }]);
      const at = `seed ${SEED} case ${c}`;
      if (twoHolders.length > 0 || !outcomes.every((o) => o.ok)) console.log(JSON.stringify(outcomes, null, 1));
      assert.deepEqual(twoHolders, [], `${at}: two holders`);
      assert.deepEqual(
        outcomes.map((o) => o.ok && o.error === undefined),
        [true, true],
        `${at}: both saves land`,
      );
      assert.ok(loaded(dir, 'wrong-a') && loaded(dir, 'wrong-b'), `${at}: both holds kept`);
      const left = fs.readdirSync(path.dirname(file)).filter((n) => n.endsWith('.lock') || n.endsWith('.stale'));
      assert.deepEqual(left, [], `${at}: a lock nobody holds, or one moved aside, left behind`);
    }
  });

  it('a takeover moving aside a live lock whose holder then gives it up leaves no lock behind', async function () {
    // Q looks at the stale lock; P takes it over and holds the file; Q moves P's live lock aside; P is done and gives
    // its lock up (none there to remove); Q puts it back: a lock nobody holds
    const [Q, P] = [0, 1];
    let phase = 0;
    const pick: Pick = (ready, state) => {
      const next = (i: number): number => Atomics.load(state, NEXT + i);
      if (phase === 0 && ready.includes(Q) && next(Q) !== 1) return Q;
      if (phase === 0) phase = 1;
      if (phase === 1 && ready.includes(P) && Atomics.load(state, HOLDING + P) === 0) return P;
      if (phase === 1) return ((phase = 2), Q); // Q's rename: P's lock aside
      if (phase === 2 && ready.includes(P)) return P; // P's work and release
      return ready[0];
    };
    const { dir, file, outcomes } = await race(new Rng(SEED), [{ password: 'wrong-q' }, { password: 'wrong-p' }], pick);
    assert.equal(phase, 2, 'the schedule was followed');
    assert.deepEqual(
      outcomes.map((o) => o.ok && o.error === undefined),
      [true, true],
      JSON.stringify(outcomes.map((o) => o.error)),
    );
    assert.ok(loaded(dir, 'wrong-q') && loaded(dir, 'wrong-p'), 'both holds kept');
    assert.equal(fs.existsSync(`${file}.lock`), false, 'a lock nobody holds was left behind');
  });

  it('a crash of one saver at a drawn operation: never two holders, the other lands or says the lock is held', async function () {
    const rng = new Rng(SEED + 1);
    for (let c = 0; c < CASES; c++) {
      const crashAt = rng.int(1, 30);
      const { outcomes, twoHolders } = await race(rng, [{ password: 'wrong-a', crashAt }, { password: 'wrong-b' }]);
      const at = `seed ${SEED} case ${c} (crash at operation ${crashAt})`;
      assert.deepEqual(twoHolders, [], `${at}: two holders`);
      const other = outcomes[1];
      assert.ok(other.ok || /held by another Node-RED/.test(String(other.error)), `${at}: ${JSON.stringify(other)}`);
    }
  });
});
