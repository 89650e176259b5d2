/**
 * The secrets configured in this Node-RED (lh-server passwords and instrument tokens), kept while their nodes are
 * deployed, and the redaction step (src/contract/redaction.ts) bound to them: redact, redactDeep and redactErr take
 * them out of any text a node lets out (msg.error, status, logs), whichever node produced it.
 */
import { redactError, redactText, redactValue } from '../../contract/redaction';

const byOwner = new Map<string, string[]>();
let all: string[] = [];

/**
 * Keeps `secrets` (one node's) in the list the redaction step takes out; returns the list kept, which `forgetSecrets`
 * takes back.
 */
export function rememberSecrets(owner: string, secrets: (string | undefined)[]): readonly string[] {
  const kept = secrets.filter((s): s is string => typeof s === 'string' && s !== '');
  byOwner.set(owner, kept);
  all = [...new Set([...byOwner.values()].flat())].sort((a, b) => b.length - a.length);
  return kept;
}

/**
 * Forgets `owner`'s secrets; with `kept`, only while they are the list `rememberSecrets` returned then: a node closing
 * late (its close waited for a request) leaves the secrets of the node of the same id that started meanwhile.
 */
export function forgetSecrets(owner: string, kept?: readonly string[]): void {
  if (kept !== undefined && byOwner.get(owner) !== kept) return;
  if (!byOwner.delete(owner)) return;
  all = [...new Set([...byOwner.values()].flat())].sort((a, b) => b.length - a.length);
}

/** The text without any configured secret, token, JWT or URL userinfo. */
export function redact(text: string): string {
  return redactText(text, all);
}

/** A copy of the value without any secret; `extra` adds secrets that are not configured (e.g. typed into a dialog). */
export function redactDeep<T>(value: T, extra: (string | undefined)[] = []): T {
  const more = extra.filter((s): s is string => typeof s === 'string' && s !== '');
  return redactValue(value, more.length > 0 ? [...more, ...all].sort((a, b) => b.length - a.length) : all);
}

export function redactErr<E extends Error>(err: E): E {
  return redactError(err, all);
}
