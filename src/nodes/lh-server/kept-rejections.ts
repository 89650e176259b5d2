/**
 * Where the logins of an instrument keep a rejected user name and password across restarts of Node-RED: one file per
 * rejection in the user directory (`<userDir>/lh-login-holds/<digest>.json`, mode 0600, in a folder of mode 0700). A
 * Node-RED restarted in a loop (systemd, a container's restart policy) with a wrong password so sends it once, not
 * once per start, and does not lock the user out. The file's name is a digest of the instrument and the gate's key
 * (itself a digest of the user name and password); the file holds the session state, the status and the time, never
 * the password, the user name or the instrument's words. A Test connection that succeeds deletes it; without the
 * editor, deleting the folder and restarting Node-RED lets every kept rejection go.
 */
import { createHash, randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';

import { type KeptRejection, type RejectionStore } from '../../client';

export const HOLDS_DIR = 'lh-login-holds';
/** At most this many files are kept (the oldest goes first): every changed password leaves one behind until then. */
export const MAX_HOLD_FILES = 200;
/** A file larger than this is not read (it holds a few numbers). */
const MAX_FILE_BYTES = 4096;

/** The file of the rejection `key` (a LoginGate key) of the instrument `identity`. */
export function holdFile(userDir: string, identity: string, key: string): string {
  const name = createHash('sha256')
    .update(JSON.stringify(['lh-login-hold', identity, key]))
    .digest('hex')
    .slice(0, 40);
  return path.join(userDir, HOLDS_DIR, `${name}.json`);
}

/**
 * The store of the instrument `identity` in `userDir` (synchronous: a login asks it once per key and start); none
 * without a user directory (an embedded runtime: rejections are held in memory only, each start tries once).
 */
export function keptRejections(userDir: unknown, identity: string): RejectionStore | undefined {
  if (typeof userDir !== 'string' || userDir === '') return undefined;
  const dir = path.join(userDir, HOLDS_DIR);
  return {
    wayOut: `without the editor: delete the folder ${dir} and restart Node-RED, which then tries these credentials once`,
    load(key) {
      const file = holdFile(userDir, identity, key);
      let text: string;
      try {
        if (fs.statSync(file).size > MAX_FILE_BYTES) return undefined;
        text = fs.readFileSync(file, 'utf8');
      } catch {
        return undefined; // none kept (or unreadable: the login goes as without a store)
      }
      return keptOf(text);
    },
    save(key, kept) {
      const file = holdFile(userDir, identity, key);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        fs.writeFileSync(tmp, `${JSON.stringify(kept)}\n`, { mode: 0o600 });
        fs.renameSync(tmp, file);
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      pruneOldest(dir);
    },
    remove(key) {
      fs.rmSync(holdFile(userDir, identity, key), { force: true });
    },
  };
}

/** A kept rejection from a file's text; undefined when it is not one (a file may say anything). */
export function keptOf(text: string): KeptRejection | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { state, statusCode, at } = value as Record<string, unknown>;
  if (typeof state !== 'string' || typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  if (statusCode !== undefined && (typeof statusCode !== 'number' || !Number.isInteger(statusCode))) return undefined;
  return { state, statusCode, at };
}

/** Deletes the oldest files past MAX_HOLD_FILES. */
function pruneOldest(dir: string): void {
  const names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  if (names.length <= MAX_HOLD_FILES) return;
  const byAge = names
    .map((n) => {
      try {
        return { n, t: fs.statSync(path.join(dir, n)).mtimeMs };
      } catch {
        return { n, t: 0 };
      }
    })
    .sort((a, b) => a.t - b.t);
  for (const { n } of byAge.slice(0, names.length - MAX_HOLD_FILES)) fs.rmSync(path.join(dir, n), { force: true });
}
