/**
 * The secrets configured in this Node-RED (lh-server passwords and instrument tokens), kept while their nodes are
 * deployed, and the redaction step (src/contract/redaction.ts) bound to them: redact, redactDeep and redactErr take
 * them out of any text a node lets out (msg.error, status, logs), whichever node produced it.
 */
import { redactError, redactText, redactValue } from '../../contract/redaction';

/**
 * The lists of secrets each node (by id) put here, oldest first: a redeployed node of an id starts while the node it
 * replaces may still close (a close that outlasts Node-RED's nodeCloseTimeout), and that one still talks (its last
 * login refused, quoting a password the deploy changed): each keeps its own list until it forgets it. At most
 * MAX_LISTS_PER_OWNER per id (a close that never forgets keeps nothing forever over redeploys). A close forgets
 * within seconds (lh-server: its client's close, at most 3 s, and 1 s for the audit; lh-coordination: 8 s), so the
 * bound is set above the deploys a person (or a script) makes in that time: at 4, the fifth quick deploy dropped the
 * list of the node still closing from the first, and its last login refused went to the log with its password.
 */
const byOwner = new Map<string, (readonly string[])[]>();
const MAX_LISTS_PER_OWNER = 32;
let all: string[] = [];

function gather(): void {
  all = [...new Set([...byOwner.values()].flat(2))].sort((a, b) => b.length - a.length);
}

/**
 * Keeps `secrets` (one node's) in the list the redaction step takes out, beside those of a node of the same id still
 * closing; returns the list kept, which `forgetSecrets` takes back.
 */
export function rememberSecrets(owner: string, secrets: (string | undefined)[]): readonly string[] {
  const kept = secrets.filter((s): s is string => typeof s === 'string' && s !== '');
  const lists = [...(byOwner.get(owner) ?? []), kept].slice(-MAX_LISTS_PER_OWNER);
  byOwner.set(owner, lists);
  gather();
  return kept;
}

/**
 * Forgets `owner`'s secrets: with `kept`, only that list (the one `rememberSecrets` returned: a node closing late
 * leaves the secrets of the node of the same id that started meanwhile, and keeps its own until then); without, all.
 */
export function forgetSecrets(owner: string, kept?: readonly string[]): void {
  const lists = byOwner.get(owner);
  if (lists === undefined) return;
  const left = kept === undefined ? [] : lists.filter((list) => list !== kept);
  if (left.length === lists.length) return;
  if (left.length === 0) byOwner.delete(owner);
  else byOwner.set(owner, left);
  gather();
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
