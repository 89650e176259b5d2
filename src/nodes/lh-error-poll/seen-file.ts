/**
 * Where *Remember* keeps a poll node's memory of reported errors when no context store is chosen: one file per node
 * in the user directory (`<userDir>/lh-seen-errors/<hash of the node id>.json`, mode 0600), as the answer page keeps
 * its link key there. So it survives a restart of Node-RED with the default settings.js, whose context store is memory
 * and is emptied on every stop. A write goes to a temporary file that is then renamed over the old one: a crash
 * leaves the old memory or the new one, never half of one. The file holds error ids and what the instrument said of
 * them (title, time, severity), never a credential of the package's (a secret an instrument wrote into an error's
 * text stays in it: README "Security"). Bounded: a file larger than MAX_FILE_BYTES is not read.
 */
import { createHash, randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';

export const SEEN_DIR = 'lh-seen-errors';
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface SeenStore {
  get(callback: (err: Error | undefined, value: unknown) => void): void;
  set(value: unknown, callback: (err: Error | undefined) => void): void;
  /** the file, for messages */
  readonly file: string;
  /** Deletes the file once the writes asked for so far are done; a write asked for later is dropped (a deleted node). */
  remove(): Promise<void>;
}

/** The file of node `nodeId` under `userDir`. */
export function seenFile(userDir: string, nodeId: string): string {
  const name = createHash('sha256').update(`lh-error-poll:${nodeId}`).digest('hex').slice(0, 32);
  return path.join(userDir, SEEN_DIR, `${name}.json`);
}

/**
 * The directory of the memory files, made once per process (issue 31: a mkdir with every save was 7 % of Node-RED's
 * work in a burst of 1,000 errors, one save per poll that raised or resolved): every store of one user directory
 * shares the promise that made it. A directory removed while Node-RED runs is made again by the save that misses it.
 */
const madeDirs = new Map<string, Promise<void>>();

function makeDir(dir: string, again = false): Promise<void> {
  let made = again ? undefined : madeDirs.get(dir);
  if (!made) {
    made = fs.promises.mkdir(dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    madeDirs.set(dir, made);
    made.catch(() => madeDirs.delete(dir)); // not made: the next save tries again
  }
  return made;
}

/** Writes `text` to `tmp` in `dir`, making the directory first if this process has not (or it has gone since). */
async function writeIn(dir: string, tmp: string, text: string): Promise<void> {
  await makeDir(dir);
  try {
    await fs.promises.writeFile(tmp, text, { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await makeDir(dir, true);
    await fs.promises.writeFile(tmp, text, { mode: 0o600 });
  }
}

export function seenFileStore(userDir: string, nodeId: string): SeenStore {
  const file = seenFile(userDir, nodeId);
  /** writes in order: a later save never lands before an earlier one */
  let queue: Promise<void> = Promise.resolve();
  let removed = false;
  return {
    file,
    remove() {
      removed = true;
      queue = queue.then(() => fs.promises.rm(file, { force: true })).catch(() => undefined);
      return queue;
    },
    get(callback) {
      void (async () => {
        try {
          const stat = await fs.promises.stat(file);
          if (stat.size > MAX_FILE_BYTES) throw new Error(`${file} is larger than ${MAX_FILE_BYTES} bytes: not read`);
          callback(undefined, JSON.parse(await fs.promises.readFile(file, 'utf8')) as unknown);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') callback(undefined, undefined);
          else callback(err as Error, undefined);
        }
      })();
    },
    set(value, callback) {
      const text = `${JSON.stringify(value)}\n`;
      if (removed) {
        callback(undefined); // the node was deleted: its memory is gone, not written again
        return;
      }
      queue = queue.then(async () => {
        const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
        try {
          await writeIn(path.dirname(file), tmp, text);
          await fs.promises.rename(tmp, file);
          callback(undefined);
        } catch (err) {
          await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
          callback(err as Error);
        }
      });
    },
  };
}
