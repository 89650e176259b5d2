/**
 * The child of login-holds-two-node-reds-write-one-file-at-once.test.ts: a Node-RED process keeping one rejected
 * login in a user directory it shares. With `pause`: it stops once its hold is written to its temporary file, before
 * that file takes the hold file's place (prints `paused`), until the file `go` exists. With `go` and a `start` file:
 * loaded, it prints `ready` and keeps its hold once that file exists (it was started beforehand: a child's start takes
 * seconds on a busy machine, and a lock the paused one held longer than the stale limit would be taken over). It prints
 * `blocked` if it finds the hold file locked by another process, and then makes the file `go` itself (the paused one
 * goes on within the wait for the lock, not after a round trip through the test's busy process). Prints `saved` once
 * its hold is kept.
 */
import fs from 'fs';

import { LoginGate } from '../../src/client';
import { keptRejections } from '../../src/nodes/lh-server/kept-rejections';

const [userDir, identity, username, password, mode, go, start] = process.argv.slice(2);

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

if (mode === 'pause') {
  const renameSync = fs.renameSync.bind(fs);
  (fs as { renameSync: unknown }).renameSync = (from: fs.PathLike, to: fs.PathLike): void => {
    if (String(to).endsWith('.json')) {
      process.stdout.write('paused\n');
      while (!fs.existsSync(go)) sleepSync(5);
    }
    renameSync(from, to);
  };
}
const openSync = fs.openSync.bind(fs) as (...args: unknown[]) => number;
let told = false;
(fs as { openSync: unknown }).openSync = (...args: unknown[]): number => {
  try {
    return openSync(...args);
  } catch (err) {
    if (!told && String(args[0]).endsWith('.lock') && (err as NodeJS.ErrnoException).code === 'EEXIST') {
      told = true;
      process.stdout.write('blocked\n');
      fs.writeFileSync(go, '');
    }
    throw err;
  }
};

if (start) {
  process.stdout.write('ready\n');
  while (!fs.existsSync(start)) sleepSync(5);
}
const credentials = { username, password };
keptRejections(userDir, identity)?.save(LoginGate.keyOf(username, password), credentials, {
  state: 'login-failed',
  statusCode: 401,
  at: Date.now(),
});
process.stdout.write('saved\n');
