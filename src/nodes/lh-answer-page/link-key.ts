/**
 * The key answer links are signed with when the node's dialog never stored a secret (every imported example):
 * one random key per Node-RED, kept in its user directory (`lh-link-key`, mode 0600), so links already sent stay
 * valid across restarts and redeploys. Each node signs with its own secret derived from that key and its id.
 * Deleting the file (and restarting) makes every such link invalid at once.
 */
import { createHmac, randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';

export const KEY_FILE = 'lh-link-key';
const KEY_BYTES = 32;

/** The node's link secret: HMAC of its id under the Node-RED's key (the key itself never signs a link). */
export function derivedSecret(key: Buffer, nodeId: string): string {
  return createHmac('sha256', key).update(`lh-answer-page link secret\n${nodeId}`).digest('base64url');
}

function parseKey(text: string): Buffer | undefined {
  const key = Buffer.from(text.trim(), 'base64url');
  return key.length === KEY_BYTES ? key : undefined;
}

export type KeySource = { key: Buffer; persisted: true; file: string } | { key: Buffer; persisted: false; reason: string };

/**
 * Reads the key of `userDir`, creating it (0600, never overwriting one another process made meanwhile) when missing.
 * Without a user dir, or when the file cannot be read or written, a key for this process only, with the reason.
 */
export function loadLinkKey(userDir: unknown): KeySource {
  if (typeof userDir !== 'string' || userDir === '') {
    return { key: randomBytes(KEY_BYTES), persisted: false, reason: 'Node-RED has no user directory' };
  }
  const file = path.join(userDir, KEY_FILE);
  try {
    try {
      const existing = parseKey(fs.readFileSync(file, 'utf8'));
      if (existing) return { key: existing, persisted: true, file };
      return {
        key: randomBytes(KEY_BYTES),
        persisted: false,
        reason: `${file} does not hold a key (delete it to have a new one made)`,
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const key = randomBytes(KEY_BYTES);
    try {
      fs.writeFileSync(file, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // made meanwhile: that key wins
    }
    const stored = parseKey(fs.readFileSync(file, 'utf8'));
    if (stored) return { key: stored, persisted: true, file };
    return { key, persisted: false, reason: `${file} does not hold a key` };
  } catch (err) {
    return { key: randomBytes(KEY_BYTES), persisted: false, reason: `${file}: ${(err as Error).message}` };
  }
}

const loaded = new Map<string, KeySource>();

/** The key of `userDir`, read once per process. */
export function linkKey(userDir: unknown): KeySource {
  const id = typeof userDir === 'string' ? userDir : '';
  let source = loaded.get(id);
  if (!source) loaded.set(id, (source = loadLinkKey(userDir)));
  return source;
}

/** Redis as the shared link key needs it (the coordination's store). */
export interface SharedKeyStore {
  /** the value under `name` for this instrument, `candidate` stored first when there is none (atomically: SET NX) */
  secret(name: string, candidate: string): Promise<string>;
}

export const SHARED_KEY_NAME = 'answer-page-link-key';

/**
 * The link key of an instrument shared by every replica of a coordination group (kept in Redis, made once by the
 * first replica that needs it; `candidate`, the key a replica signs with, put back where Redis lost it): a link made by
 * one replica is verified by any other. Undefined when what Redis holds is not a key (never overwritten: the caller
 * keeps its own key and says why).
 */
export async function sharedLinkKey(store: SharedKeyStore, candidate?: Buffer): Promise<Buffer | undefined> {
  const text = await store.secret(SHARED_KEY_NAME, (candidate ?? randomBytes(KEY_BYTES)).toString('base64url'));
  return parseKey(text);
}
