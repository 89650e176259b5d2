/**
 * Where the logins of an instrument keep a rejected user name and password across restarts of Node-RED: one file per
 * rejection in the user directory (`<userDir>/lh-login-holds/<name>.json`, mode 0600, in a folder of mode 0700). A
 * Node-RED restarted in a loop (systemd, a container's restart policy) with a wrong password so sends it once, not
 * once per start, and does not lock the user out. The file's name is a memory-hard hash (scrypt, with a random salt
 * kept in the folder) of the instrument, the user name and the password: anyone who can read the user directory must
 * pay that hash for each password guessed, as a fast digest of the password would let them test guesses offline at
 * GPU speed. The hash is paid once per credentials and start (at the first login), never per login. The file holds
 * the session state, the status and the time, never the password, the user name or the instrument's words. A Test
 * connection that succeeds deletes it; without the editor, deleting the folder and restarting Node-RED lets every kept
 * rejection go. Files of the earlier naming (a fast digest) are never looked up again, only pruned.
 *
 * The folder is trusted only when it is a real folder (not a symlink, not a file): nothing is written outside it, and
 * a file in it that is not a regular file (a FIFO, a device, a symlink) or is larger than a few numbers is not read.
 */
import { randomBytes, scryptSync } from 'crypto';
import fs from 'fs';
import path from 'path';

import { type KeptRejection, type LoginCredentials, type RejectionStore } from '../../client';

export const HOLDS_DIR = 'lh-login-holds';
/** The folder's salt: 16 random bytes in hex, made with the first file. */
export const SALT_FILE = 'salt';
/** At most this many files are kept (the oldest goes first): every changed password leaves one behind until then. */
export const MAX_HOLD_FILES = 200;
/** A file larger than this is not read (it holds a few numbers). */
const MAX_FILE_BYTES = 4096;
/** scrypt's cost: 16 MiB and some 25–50 ms per hash on a small machine (paid once per credentials and start). */
export const HOLD_SCRYPT = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const SALT_PATTERN = /^[0-9a-f]{32}$/;
/** Names worked out (credentials key → salt and name) are remembered at most this many. */
const MAX_NAMES = 1000;

/** The name of the file of a rejection of `credentials` at the instrument `identity`, under the folder's `salt`. */
export function holdName(salt: string, identity: string, credentials: LoginCredentials): string {
  const input = JSON.stringify(['lh-login-hold-2', identity, credentials.username.toLowerCase(), credentials.password]);
  return `${scryptSync(input, salt, 32, HOLD_SCRYPT).toString('hex')}.json`;
}

/** A file's text when it is a regular file (not followed through a symlink, never blocking) of at most `max` bytes. */
export function readSmallFile(file: string, max: number): string | undefined {
  let fd: number;
  try {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    fd = fs.openSync(file, O_RDONLY | (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > max) return undefined;
    const buffer = Buffer.alloc(max + 1);
    const n = fs.readSync(fd, buffer, 0, max + 1, 0);
    return n > max ? undefined : buffer.subarray(0, n).toString('utf8');
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether `dir` is a real folder (not a symlink to one elsewhere); false when it is missing. */
function isRealDir(dir: string): boolean {
  try {
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && !stat.isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The store of the instrument `identity` in `userDir` (synchronous: a login asks it once per key and start); none
 * without a user directory (an embedded runtime: rejections are held in memory only, each start tries once).
 */
export function keptRejections(userDir: unknown, identity: string): RejectionStore | undefined {
  if (typeof userDir !== 'string' || userDir === '') return undefined;
  const dir = path.join(userDir, HOLDS_DIR);
  const saltFile = path.join(dir, SALT_FILE);
  const names = new Map<string, { salt: string; name: string }>();

  const saltNow = (): string | undefined => {
    if (!isRealDir(dir)) return undefined;
    const text = readSmallFile(saltFile, 64)?.trim();
    return text !== undefined && SALT_PATTERN.test(text) ? text : undefined;
  };
  /** The folder's salt, made (with the folder) when there is none; a salt another process made first is taken. */
  const saltToWrite = (): string => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!isRealDir(dir)) throw new Error(`${dir} is not a folder`);
    const found = saltNow();
    if (found) return found;
    const salt = randomBytes(16).toString('hex');
    const tmp = path.join(dir, `${SALT_FILE}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      fs.writeFileSync(tmp, `${salt}\n`, { mode: 0o600, flag: 'wx' });
      // a salt file that is not one (cut short, overwritten) is replaced; else made only if still missing (EEXIST:
      // another process made it first, and its salt is taken below); whichever salt is on disk then is the one used
      if (fs.existsSync(saltFile)) fs.renameSync(tmp, saltFile);
      else fs.linkSync(tmp, saltFile);
      return saltNow() ?? salt;
    } catch (err) {
      const other = saltNow();
      if (other) return other;
      throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  };
  const fileOf = (key: string, credentials: LoginCredentials, salt: string): string => {
    let known = names.get(key);
    if (known?.salt !== salt) {
      known = { salt, name: holdName(salt, identity, credentials) };
      if (names.size >= MAX_NAMES) names.clear();
      names.set(key, known);
    }
    return path.join(dir, known.name);
  };

  return {
    wayOut: `without the editor: delete the folder ${dir} and restart Node-RED, which then tries these credentials once`,
    load(key, credentials) {
      const salt = saltNow();
      if (!salt) return undefined; // none kept (or unreadable: the login goes as without a store)
      const text = readSmallFile(fileOf(key, credentials, salt), MAX_FILE_BYTES);
      return text === undefined ? undefined : keptOf(text);
    },
    save(key, credentials, kept) {
      const file = fileOf(key, credentials, saltToWrite());
      const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        fs.writeFileSync(tmp, `${JSON.stringify(kept)}\n`, { mode: 0o600, flag: 'wx' });
        fs.renameSync(tmp, file);
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      pruneOldest(dir);
    },
    remove(key, credentials) {
      const salt = saltNow();
      if (salt) fs.rmSync(fileOf(key, credentials, salt), { force: true });
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
