/**
 * The child of login-holds-two-node-reds-write-one-file-at-once.test.ts: a Node-RED process keeping one rejected
 * login in a user directory it shares. With `pause`: it stops once its hold is written to its temporary file, before
 * that file takes the hold file's place (prints `paused`), until the file `go` exists. It prints `blocked` if it finds
 * the hold file locked by another process. Prints `saved` once its hold is kept.
 */
import fs from 'fs';

import { LoginGate } from '../../src/client';
import { keptRejections } from '../../src/nodes/lh-server/kept-rejections';

const [userDir, identity, username, password, mode, go] = process.argv.slice(2);

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
    }
    throw err;
  }
};

const credentials = { username, password };
keptRejections(userDir, identity)?.save(LoginGate.keyOf(username, password), credentials, {
  state: 'login-failed',
  statusCode: 401,
  at: Date.now(),
});
process.stdout.write('saved\n');
