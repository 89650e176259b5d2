/**
 * Where the logins of an instrument keep a rejected user name and password across restarts of Node-RED: one file per
 * instrument and user name in the user directory (`<userDir>/lh-login-holds/<name>.json`, mode 0600, in a folder of
 * mode 0700). A Node-RED restarted in a loop (systemd, a container's restart policy) with a wrong password so sends it
 * once, not once per start, and does not lock the user out. The file's name is a digest of the folder's random salt,
 * the instrument and the user name (no password); the file holds, per rejected password (the newest few), a
 * memory-hard hash of it (scrypt under the salt), the session state, the status and the time: anyone who can read the
 * user directory must pay that hash for each password guessed, as a fast digest would let them test guesses offline
 * at GPU speed. The hash is paid only where a file is kept for the instrument and user (at the first login of a
 * start, and when a rejection is written), never per login, and never for the other instruments of a fleet. Never the
 * password, the user name or the instrument's words. A Test connection that succeeds deletes its password's hold;
 * without the editor, deleting the folder and restarting Node-RED lets every kept rejection go. Files of earlier
 * namings are never looked up again, only pruned. Node-REDs sharing the user directory share the folder: one salt
 * (the first made is the one all take), and each file read and written in turn under its lock file (`<file>.lock`).
 * Upkeep: a folder or file with group or other bits is tightened (0700, 0600) at a store's first use; at each save,
 * `.tmp` files of a Node-RED killed mid-write (older than STALE_TMP_MS) and hold files not written for
 * MAX_HOLD_FILE_AGE_MS are pruned, then the oldest past MAX_HOLD_FILES.
 *
 * The folder is trusted only when it is a real folder (not a symlink, not a file): nothing is written outside it, and
 * a file in it that is not a regular file (a FIFO, a device, a symlink) or is larger than a few numbers is not read.
 */
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'crypto';
import fs from 'fs';
import path from 'path';

import { type KeptRejection, type LoginCredentials, type RejectionStore } from '../../client';

export const HOLDS_DIR = 'lh-login-holds';
/** The folder's salt: 16 random bytes in hex, made with the first file. */
export const SALT_FILE = 'salt';
/** At most this many files are kept (the oldest goes first): every changed password leaves one behind until then. */
export const MAX_HOLD_FILES = 200;
/**
 * A hold file not written for this long is pruned at the next save (of any instrument or user): the files of
 * credentials changed since (every corrected password leaves one behind) do not stay for ever below MAX_HOLD_FILES. A
 * Node-RED still deployed with that wrong password then sends it once more, once in 30 days: no lockout counts that.
 */
export const MAX_HOLD_FILE_AGE_MS = 30 * 24 * 3_600_000;
/** A `.tmp` file older than this was left by a Node-RED killed between its write and its rename: pruned. */
export const STALE_TMP_MS = 60_000;
/** A file larger than this is not read (it holds a few hashes and numbers). */
const MAX_FILE_BYTES = 4096;
/** Rejected passwords kept per instrument and user name (the newest): several nodes may hold several wrong ones. */
export const MAX_HOLDS_PER_FILE = 8;
/** scrypt's cost: 16 MiB and some 25–50 ms per hash on a small machine (paid once per credentials and start). */
export const HOLD_SCRYPT = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const SALT_PATTERN = /^[0-9a-f]{32}$/;
/** Hashes worked out (credentials key → salt and hash) are remembered at most this many. */
const MAX_CHECKS = 1000;

/** The name of the file of the rejections of the user name in `credentials` at the instrument `identity`. */
export function holdName(salt: string, identity: string, credentials: LoginCredentials): string {
  const input = JSON.stringify(['lh-login-hold-3', salt, identity, credentials.username.toLowerCase()]);
  return `${createHash('sha256').update(input).digest('hex').slice(0, 40)}.json`;
}

/** The memory-hard hash a kept rejection of `credentials` at `identity` is known by, under the folder's `salt`. */
export function holdCheck(salt: string, identity: string, credentials: LoginCredentials): string {
  const input = JSON.stringify(['lh-login-hold-3', identity, credentials.username.toLowerCase(), credentials.password]);
  return scryptSync(input, salt, 32, HOLD_SCRYPT).toString('hex');
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
  const checks = new Map<string, { salt: string; check: string }>();

  let tightened = false;
  const saltNow = (): string | undefined => {
    if (!isRealDir(dir)) return undefined;
    if (!tightened) tightened = tighten(dir);
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
      // made only if still missing (a link fails on a file there); one there is taken when it is a salt (another
      // Node-RED made it since this one looked, and may have kept holds under it already: replacing it would lose
      // them), replaced only when it is not one (cut short, overwritten); whichever salt is on disk then is used
      try {
        fs.linkSync(tmp, saltFile);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const other = saltNow();
        if (other) return other;
        fs.renameSync(tmp, saltFile);
      }
      return saltNow() ?? salt;
    } catch (err) {
      const other = saltNow();
      if (other) return other;
      throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  };
  /** The hash of `credentials` (scrypt: worked out once per key and salt, and only where a file is kept for them). */
  const checkOf = (key: string, credentials: LoginCredentials, salt: string): string => {
    let known = checks.get(key);
    if (known?.salt !== salt) {
      known = { salt, check: holdCheck(salt, identity, credentials) };
      if (checks.size >= MAX_CHECKS) checks.clear();
      checks.set(key, known);
    }
    return known.check;
  };
  /** The holds kept in `file` (none when it is missing, not a regular file, too large or not one). */
  const holdsIn = (file: string): KeptHold[] => {
    const text = readSmallFile(file, MAX_FILE_BYTES);
    return text === undefined ? [] : holdsOf(text);
  };
  const write = (file: string, holds: KeptHold[]): void => {
    if (holds.length === 0) {
      fs.rmSync(file, { force: true });
      return;
    }
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      fs.writeFileSync(tmp, `${JSON.stringify({ holds })}\n`, { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, file);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  };

  return {
    wayOut: `without the editor: delete the folder ${dir} and restart Node-RED, which then tries these credentials once`,
    load(key, credentials) {
      const salt = saltNow();
      if (!salt) return undefined; // none kept (or unreadable: the login goes as without a store)
      const holds = holdsIn(path.join(dir, holdName(salt, identity, credentials)));
      if (holds.length === 0) return undefined; // no hash paid for an instrument and user with nothing kept
      const check = checkOf(key, credentials, salt);
      const hold = holds.find((h) => sameCheck(h.check, check));
      return hold && { state: hold.state, statusCode: hold.statusCode, at: hold.at };
    },
    save(key, credentials, kept) {
      const salt = saltToWrite();
      const file = path.join(dir, holdName(salt, identity, credentials));
      const check = checkOf(key, credentials, salt);
      // read, changed and written under the file's lock: another Node-RED sharing the folder writing its hold of
      // another password of this user between the read and the write would lose this one's, or this one its
      withFileLock(file, () => {
        const others = holdsIn(file).filter((h) => !sameCheck(h.check, check));
        write(file, [...others, { check, ...kept }].slice(-MAX_HOLDS_PER_FILE));
      });
      prune(dir);
    },
    remove(key, credentials) {
      const salt = saltNow();
      if (!salt) return;
      const file = path.join(dir, holdName(salt, identity, credentials));
      if (holdsIn(file).length === 0) return;
      const check = checkOf(key, credentials, salt);
      withFileLock(file, () => {
        const holds = holdsIn(file);
        const rest = holds.filter((h) => !sameCheck(h.check, check));
        if (rest.length < holds.length) write(file, rest);
      });
    },
  };
}

/** How long a save or release waits for another Node-RED's on the same file (each holds it well under 1 ms). */
export const HOLD_LOCK_WAIT_MS = 1000;
/** A lock file older (or, the clock set back, younger) than this was left by a Node-RED that died holding it. */
const STALE_LOCK_MS = 5000;

/** Blocks the thread for `ms` (the store is synchronous: a login asks it once per key and start). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `work` holding `<file>.lock` (made exclusively: never through a symlink, never shared), so that the Node-REDs
 * sharing a user directory read, change and write one file in turn. A lock left by a Node-RED that died holding it is
 * taken over once stale; one held past HOLD_LOCK_WAIT_MS throws (the rejection is then held in memory only).
 */
function withFileLock<T>(file: string, work: () => T): T {
  const lock = `${file}.lock`;
  const until = Date.now() + HOLD_LOCK_WAIT_MS;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = fs.openSync(lock, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let seen: fs.Stats;
      try {
        seen = fs.lstatSync(lock);
      } catch {
        continue; // given back meanwhile
      }
      if (Math.abs(Date.now() - seen.mtimeMs) > STALE_LOCK_MS) takeOverStale(lock, seen);
      else if (Date.now() >= until) throw new Error(`${lock} is held by another Node-RED`);
      else sleepSync(2);
    }
  }
  try {
    return work();
  } finally {
    releaseLock(lock, fd);
  }
}

/**
 * Removes the stale lock `seen` at `lock`, and only it: two Node-REDs finding one stale lock at once used to both
 * delete "it" (the second deleting the lock the first had made meanwhile) and both hold the file. The lock is moved
 * aside by a rename (atomic: of two renames of one file only one finds it); the one that moved a lock other than the
 * stale one it saw (made by a Node-RED that took over first) links it back and waits its turn.
 */
function takeOverStale(lock: string, seen: fs.Stats): void {
  const aside = `${lock}.${randomBytes(6).toString('hex')}.stale`;
  try {
    fs.renameSync(lock, aside);
  } catch {
    return; // taken over (or given back) by another meanwhile: try again
  }
  try {
    let moved: fs.Stats;
    try {
      moved = fs.lstatSync(aside);
    } catch {
      // pruned meanwhile by another Node-RED's save: a rename keeps the time, and a stale lock's is past the minute a
      // leftover `.stale` is kept (a live lock's is not): the one moved was stale; try again
      return;
    }
    // the same file: its inode and its time (a stale lock's inode may be reused at once by the lock made after it)
    if (moved.ino !== seen.ino || moved.dev !== seen.dev || moved.mtimeMs !== seen.mtimeMs) {
      try {
        fs.linkSync(aside, lock); // a live lock: back in place (unless a newer one is there, which then holds)
      } catch {
        // EEXIST: another lock was made meanwhile; the one moved aside was taken over as stale by its owner's peers
        return;
      }
      // its holder may have given it up while it was aside (and found none to remove): it is nobody's, and would
      // block every save of this file until stale. Given up locks are marked (releaseLock), so it goes now; the name
      // aside still links it, so a lock there of the same inode is this one.
      try {
        if (fs.lstatSync(aside).size > 0 && fs.lstatSync(lock).ino === moved.ino) fs.rmSync(lock, { force: true });
      } catch {
        // removed by its holder meanwhile
      }
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/**
 * Gives the lock back: removed only when it is still this holder's (not one made since by a takeover). Marked given
 * up first (one byte written through the descriptor, wherever its name is): a Node-RED taking over a stale lock that
 * moved this live one aside meanwhile, and puts it back after this looked, sees the mark and removes it.
 */
function releaseLock(lock: string, fd: number): void {
  try {
    fs.writeSync(fd, '0');
    const own = fs.fstatSync(fd);
    const there = fs.lstatSync(lock);
    if (own.ino === there.ino && own.dev === there.dev) fs.rmSync(lock, { force: true });
  } catch {
    // gone already
  } finally {
    fs.closeSync(fd);
  }
}

/** A kept rejection as its file holds it: the hash of the password it is known by, then what the gate kept. */
type KeptHold = KeptRejection & { check: string };

function sameCheck(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** The holds of a file's text; none when it is not such a file (a file may say anything). */
export function holdsOf(text: string): KeptHold[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const holds = typeof value === 'object' && value !== null ? (value as { holds?: unknown }).holds : undefined;
  if (!Array.isArray(holds)) return [];
  return holds.flatMap((h: unknown) => {
    const kept = keptOf(h);
    const check = typeof h === 'object' && h !== null ? (h as { check?: unknown }).check : undefined;
    return kept && typeof check === 'string' && /^[0-9a-f]{64}$/.test(check) ? [{ check, ...kept }] : [];
  });
}

/** A kept rejection from a file's entry; undefined when it is not one. */
export function keptOf(value: unknown): KeptRejection | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { state, statusCode, at } = value as Record<string, unknown>;
  if (typeof state !== 'string' || typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  if (statusCode !== undefined && (typeof statusCode !== 'number' || !Number.isInteger(statusCode))) return undefined;
  return { state, statusCode, at };
}

/**
 * Deletes the `.tmp` files older than STALE_TMP_MS (a Node-RED killed between its write and its rename; `.stale`
 * ones too: a lock moved aside by a Node-RED killed in its takeover), the hold
 * files not written for MAX_HOLD_FILE_AGE_MS, and the oldest past MAX_HOLD_FILES. Times "in the future" (the clock
 * set back since) count by their distance, as the lock's do.
 */
export function prune(dir: string, now = Date.now()): void {
  const entries = fs.readdirSync(dir).flatMap((n) => {
    try {
      const stat = fs.lstatSync(path.join(dir, n));
      return stat.isFile() ? [{ n, t: stat.mtimeMs }] : [];
    } catch {
      return [];
    }
  });
  const gone = (n: string): void => fs.rmSync(path.join(dir, n), { force: true });
  // a hold file goes under its lock, and only when it is still the one listed: another Node-RED writing a hold into it
  // since (a rename: another inode, a new time) keeps it (else that hold, just written, would be lost)
  const holdGone = ({ n, t }: { n: string; t: number }): void => {
    const file = path.join(dir, n);
    try {
      withFileLock(file, () => {
        if (fs.lstatSync(file).mtimeMs === t) fs.rmSync(file, { force: true });
      });
    } catch {
      // held by another Node-RED, or gone: left to the next save
    }
  };
  const leftOver = (n: string): boolean => n.endsWith('.tmp') || n.endsWith('.stale');
  for (const { n, t } of entries) if (leftOver(n) && Math.abs(now - t) > STALE_TMP_MS) gone(n);
  const holds = entries.filter(({ n }) => n.endsWith('.json'));
  const young = holds.filter((h) => (Math.abs(now - h.t) > MAX_HOLD_FILE_AGE_MS ? (holdGone(h), false) : true));
  if (young.length <= MAX_HOLD_FILES) return;
  young.sort((a, b) => a.t - b.t);
  for (const h of young.slice(0, young.length - MAX_HOLD_FILES)) holdGone(h);
}

/**
 * Takes group and other bits off the folder (0700) and its files (0600): a folder made by an older version or by
 * hand with looser modes would let other users of the machine read the hashes. Through descriptors opened without
 * following symlinks, so nothing outside the folder is changed. True once done (or not possible: not retried per
 * login).
 */
export function tighten(dir: string): boolean {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  const flags = O_RDONLY | (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0);
  const fix = (file: string, mode: number, kind: (s: fs.Stats) => boolean): void => {
    let fd: number;
    try {
      fd = fs.openSync(file, flags);
    } catch {
      return;
    }
    try {
      const stat = fs.fstatSync(fd);
      if (kind(stat) && (stat.mode & 0o077) !== 0) fs.fchmodSync(fd, stat.mode & mode);
    } catch {
      // not ours to change (another owner): left as it is
    } finally {
      fs.closeSync(fd);
    }
  };
  fix(dir, 0o700, (s) => s.isDirectory());
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return true;
  }
  for (const n of names) fix(path.join(dir, n), 0o600, (s) => s.isFile());
  return true;
}
