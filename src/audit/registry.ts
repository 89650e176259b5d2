import { randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';
import { sha256Hex } from './canonical';
import { chainName } from './files';
import { AuditLog } from './log-file';
import { auditBus } from './bus';
import { Actor } from './record';
import { AuditTrail } from './trail';

/** `lhAudit` in Node-RED's settings.js. */
export interface AuditSettings {
  /** false switches the audit trail off (the default is on wherever Node-RED has a user dir). */
  enabled?: boolean;
  /** Where the chains go (default `<userDir>/lh-audit`). */
  dir?: string;
  /** The checkpoint signing key (text, e.g. from an environment variable), or a file holding it. */
  key?: string;
  keyFile?: string;
  /** A chain file is continued in a new one at this size (default 64 MiB). */
  maxFileBytes?: number;
  /** false: no fsync before a request is sent (not for regulated use). Default true. */
  fsync?: boolean;
}

export const KEY_FILE_NAME = 'lh-audit.key';

interface Shared {
  log: AuditLog;
  users: number;
}

/** One log per chain file in this process, whichever lh-server nodes of that instrument use it. */
const logs = new Map<string, Shared>();
/** Chains being closed: a new writer of the same chain starts after the old one finished. */
const closing = new Map<string, Promise<void>>();

export interface AuditUse {
  trail: AuditTrail;
  /** The chain's first file (for a person to verify). */
  path: string;
  release(): Promise<void>;
}

/** The checkpoint key: configured, or made once (random, mode 0600) beside the chains. */
export function auditKey(settings: AuditSettings, dir: string): Buffer {
  if (typeof settings.key === 'string' && settings.key !== '') return Buffer.from(settings.key, 'utf8');
  const file = settings.keyFile ?? path.join(dir, KEY_FILE_NAME);
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || settings.keyFile) throw err;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('hex');
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return Buffer.from(key, 'utf8');
}

/**
 * The audit trail of one instrument, or undefined when auditing is off. `instrument` identifies the chain (the
 * instrument's URLs); `fallback` names who acts when no node said (the lh-server node).
 */
export function useAuditTrail(
  settings: AuditSettings | undefined,
  userDir: string | undefined,
  instrument: string,
  fallback: Actor,
  secrets?: () => readonly string[],
): AuditUse | undefined {
  const s = settings ?? {};
  if (s.enabled === false) return undefined;
  const dir = s.dir ?? (userDir ? path.join(userDir, 'lh-audit') : undefined);
  if (!dir) return undefined;
  const name = chainName(instrument, sha256Hex(instrument));
  const file = path.join(dir, name);
  let shared = logs.get(file);
  if (!shared) {
    const log = new AuditLog({
      dir,
      name,
      instrument,
      key: auditKey(s, dir),
      maxFileBytes: s.maxFileBytes,
      fsync: s.fsync,
      after: closing.get(file),
    });
    log.on('record', (record) => auditBus.emit('record', record));
    shared = { log, users: 0 };
    logs.set(file, shared);
  }
  shared.users++;
  const held = shared;
  let released = false;
  return {
    trail: new AuditTrail(held.log, { instrument, fallback, secrets }),
    path: `${file}.000001.jsonl`,
    async release() {
      if (released) return;
      released = true;
      held.users--;
      if (held.users > 0) return;
      if (logs.get(file) === held) logs.delete(file);
      const closed = held.log.close();
      closing.set(file, closed);
      await closed.finally(() => {
        if (closing.get(file) === closed) closing.delete(file);
      });
    },
  };
}
