/**
 * One "Node-RED" of test/review/login-hold-lock-*.test.ts, in a worker thread: it saves a kept login rejection
 * through the real store (src/nodes/lh-server/kept-rejections.ts) and stops before each of its file operations in
 * the holds folder until the test's scheduler lets it go on, so the test draws the interleaving of two such savers
 * operation by operation (the store is synchronous: a real second Node-RED is a second process doing the same).
 *
 * Shared memory (Int32Array over workerData.control): state[index] (RUN 0, WAIT 1, DONE 2), at NEXT + index what
 * its next operation is (1: a rename of the lock), at HOLDING + index 1 while this saver works under a lock (from its exclusive create to the release's first look at it).
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

import { keptRejections } from '../../src/nodes/lh-server/kept-rejections';

export const RUN = 0;
export const WAIT = 1;
export const DONE = 2;
export const HOLDING = 8;
export const NEXT = 4;

interface LockStepData {
  control: SharedArrayBuffer;
  index: number;
  userDir: string;
  holdsDir: string;
  identity: string;
  username: string;
  password: string;
  /** the login gate's key of the credentials (worked out by the test: the client is not loaded here) */
  key: string;
  /** stop for good (a crash: the process killed) before this many file operations; none when undefined */
  crashAt?: number;
}

const data = workerData as LockStepData;
const state = new Int32Array(data.control);
let active = false;
let crashed = false;
let ops = 0;
const lockFds = new Set<number>();

class Crash extends Error {}

/** Before a file operation: a crashed saver does nothing more (each operation throws), else it waits its turn. */
const trace: string[] = [];
function gate(what = ''): void {
  if (crashed) throw new Crash('crashed');
  if (!active) return;
  ops++;
  if (data.crashAt !== undefined && ops >= data.crashAt) {
    crashed = true;
    Atomics.store(state, HOLDING + data.index, 0); // a process gone holds nothing (its lock file stays)
    throw new Crash('crashed');
  }
  // what comes next, for a test's directed schedule: 1 a rename of the lock (a takeover moving it aside)
  Atomics.store(state, NEXT + data.index, what.startsWith('renameSync') && what.endsWith('.lock') ? 1 : 0);
  Atomics.store(state, data.index, WAIT);
  Atomics.notify(state, data.index);
  while (Atomics.load(state, data.index) === WAIT) Atomics.wait(state, data.index, WAIT, 1000);
  trace.push(`${Atomics.add(state, 15, 1)} ${what}`);
}

const inFolder = (p: unknown): boolean => typeof p === 'string' && p.startsWith(data.holdsDir);
type Fn = (...args: unknown[]) => unknown;
const writable = fs as unknown as Record<string, Fn>;
for (const name of ['lstatSync', 'renameSync', 'linkSync', 'rmSync', 'writeFileSync', 'readdirSync', 'unlinkSync']) {
  const real = writable[name];
  writable[name] = (...args: unknown[]) => {
    if (inFolder(args[0])) gate(`${name} ${String(args[0]).slice(data.holdsDir.length)}`);
    return real(...args);
  };
}
const realOpen = fs.openSync;
writable.openSync = (...args: unknown[]) => {
  if (inFolder(args[0])) gate(`openSync ${String(args[0]).slice(data.holdsDir.length)} ${String(args[1])}`);
  const fd = (realOpen as Fn)(...args) as number;
  if (active && String(args[0]).endsWith('.lock') && args[1] === 'wx') {
    lockFds.add(fd);
    Atomics.store(state, HOLDING + data.index, 1);
  }
  return fd;
};
for (const name of ['fstatSync', 'closeSync', 'writeSync', 'fchmodSync', 'readSync']) {
  const real = writable[name];
  writable[name] = (...args: unknown[]) => {
    const fd = args[0] as number;
    // the release begins with a look at its own lock (fstat): the work under the lock is done
    if (name === 'fstatSync' && lockFds.has(fd)) Atomics.store(state, HOLDING + data.index, 0);
    if (lockFds.has(fd) || crashed) gate(`${name} lock fd`);
    const result = real(...args);
    if (name === 'closeSync' && lockFds.delete(fd)) Atomics.store(state, HOLDING + data.index, 0);
    return result;
  };
}

const store = keptRejections(data.userDir, data.identity);
const credentials = { username: data.username, password: data.password };
let outcome: { ok: boolean; error?: string; crashed?: boolean };
try {
  active = true;
  store?.save(data.key, credentials, {
    state: 'login-failed',
    statusCode: 401,
    at: Date.now(),
  });
  outcome = { ok: true };
} catch (err) {
  outcome = crashed ? { ok: false, crashed: true } : { ok: false, error: String(err) };
} finally {
  active = false;
}
parentPort?.postMessage({ ...outcome, trace });
Atomics.store(state, data.index, DONE);
Atomics.notify(state, data.index);
