/**
 * The secrets configured in this Node-RED (lh-server passwords and instrument tokens), kept while their nodes are
 * deployed, and the redaction step (src/contract/redaction.ts) bound to them: redact, redactDeep and redactErr take
 * them out of any text a node lets out (msg.error, status, logs), whichever node produced it.
 */
import { redactError, redactText, redactValue } from '../../contract/redaction';

const byOwner = new Map<string, string[]>();
let all: string[] = [];

export function rememberSecrets(owner: string, secrets: (string | undefined)[]): void {
  byOwner.set(
    owner,
    secrets.filter((s): s is string => typeof s === 'string' && s !== ''),
  );
  all = [...new Set([...byOwner.values()].flat())].sort((a, b) => b.length - a.length);
}

export function forgetSecrets(owner: string): void {
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
