/**
 * One instrument's state as a lab watches it (MQTT, a wall screen): folded from lab events without timers, I/O or
 * Node-RED. `sameState` says whether two documents differ in anything but their time stamp, so a node emits only
 * on a change.
 */
import type { LabEvent, PendingErrorView } from './lab-events';
import { clippedWithin } from './whole-characters';

export type ConnectionState = 'online' | 'offline' | 'standby' | 'unknown';

export interface StateDocument {
  instrument: string;
  connection: { state: ConnectionState; reason: string | null };
  run: { state: string | null; protocol: string | null; step: string | null; progress: number | null; eta: string | null };
  errors: { pending: number; mostSevere: PendingErrorView | null; list: PendingErrorView[] };
  door: 'open' | 'closed' | 'unknown';
  systemReady: boolean | null;
  passwordExpiresInDays: number | null;
  /** ISO time of the last change */
  updatedAt: string;
}

/** Pending errors listed in a document; the count says how many there are in all. */
export const MAX_LISTED_ERRORS = 20;
const MAX_TEXT = 200;
/**
 * Responses listed per error, and their length: the longest response lh-answer-error sends (a page's button sends the
 * response as listed, so a response is listed whole or not at all, never clipped).
 */
const MAX_RESPONSES = 10;
const MAX_RESPONSE_TEXT = 200;

const SEVERITY_RANK: Record<string, number> = { fatal: 4, error: 3, warning: 2, info: 1, information: 1 };

/** Higher for more severe; an unknown severity ranks as an error (never hidden below a warning). */
export function severityRank(severity: string): number {
  return SEVERITY_RANK[severity.trim().toLowerCase()] ?? 3;
}

/** A document for an instrument nothing is known of yet. */
export function emptyDocument(instrument: string, now: number): StateDocument {
  return {
    instrument: clip(instrument), // an lh-server's name, of any length
    connection: { state: 'unknown', reason: null },
    run: { state: null, protocol: null, step: null, progress: null, eta: null },
    errors: { pending: 0, mostSevere: null, list: [] },
    door: 'unknown',
    systemReady: null,
    passwordExpiresInDays: null,
    updatedAt: new Date(now).toISOString(),
  };
}

/** At most `max` UTF-16 units, `…` in the last place when clipped; a character is never cut in two. */
function clip(value: string, max = MAX_TEXT): string {
  return clippedWithin(value, max);
}

/** An answer link as the state keeps it: its URL and until when it works. */
interface Link {
  url: string;
  expires?: string;
}

/** Where an answer link is kept: by source and id (every error listed under that id shares it). */
function linkKey(e: { source: string; id: string }): string {
  return `${e.source}:${e.id}`;
}

/**
 * One pending error: its id together with what the instrument says of it here, title and severity (the 0.3 identity
 * rule: an instrument may list two errors under one id; they count as two while they differ, as one when the same
 * record is listed twice).
 */
function errorKey(e: { source: string; id: string; title: string; severity: string }): string {
  return JSON.stringify([e.source, e.id, e.title, e.severity]);
}

function unique(list: PendingErrorView[]): PendingErrorView[] {
  const seen = new Set<string>();
  return list.filter((e) => !seen.has(errorKey(e)) && Boolean(seen.add(errorKey(e))));
}

/**
 * One error as the lab is shown it (the document's list, lh-state's event msgs): texts clipped to 200 characters
 * (`titleClipped` then), responses whole, the watch's identity fingerprint left out.
 */
export function shownError(e: PendingErrorView): PendingErrorView {
  const out: PendingErrorView = { source: e.source, id: clip(e.id), title: clip(e.title), severity: clip(e.severity) };
  // a clipped title is not the instrument's: a page that answers the error as shown leaves it out of the identity
  if (e.titleClipped || out.title !== e.title) out.titleClipped = true;
  const responses = (e.responses ?? []).map(String).filter((r) => r.length <= MAX_RESPONSE_TEXT);
  if (responses.length > 0) out.responses = responses.slice(0, MAX_RESPONSES);
  if (e.answerUrl) out.answerUrl = e.answerUrl;
  if (e.answerUrl && e.answerExpires) out.answerExpires = e.answerExpires;
  return out;
}

/** The errors part from a full pending list: the most severe first (then oldest first, as listed), links kept. */
function errorsOf(pending: PendingErrorView[], links: Map<string, Link>): StateDocument['errors'] {
  const withLink = (e: PendingErrorView): PendingErrorView => {
    const link = e.answerUrl ? undefined : links.get(linkKey(e));
    return link ? { ...e, answerUrl: link.url, answerExpires: link.expires } : e;
  };
  const list = pending
    .map((e, index) => ({ e: shownError(withLink(e)), index }))
    .sort((a, b) => severityRank(b.e.severity) - severityRank(a.e.severity) || a.index - b.index)
    .map((x) => x.e);
  return { pending: list.length, mostSevere: list[0] ?? null, list: list.slice(0, MAX_LISTED_ERRORS) };
}

/** What a state node keeps beside the document: every pending error (the document lists at most 20) and links. */
export interface StateMemory {
  doc: StateDocument;
  pending: PendingErrorView[];
  links: Map<string, Link>;
}

export function newMemory(instrument: string, now: number): StateMemory {
  return { doc: emptyDocument(instrument, now), pending: [], links: new Map() };
}

/** Links kept for errors that are not (yet) listed: a link may arrive before the poll lists its error. */
const MAX_LINKS = 1000;

/**
 * A list that shows under an id only other errors than the document had there (the instrument reused the id): the
 * link made for the earlier error is not the new one's (the page refuses it). The poll's list comes before its
 * 'resolved' events, which would find the id pending again and keep the link. An id that was not pending keeps its
 * link: a link may come before the poll lists its error.
 */
function dropReusedLinks(before: PendingErrorView[], after: PendingErrorView[], links: Map<string, Link>): void {
  if (links.size === 0 || before.length === 0) return;
  const now = new Set(after.map(errorKey));
  const gone = new Map<string, boolean>(); // link key → whether every error the document had under it is gone
  for (const e of before) {
    const link = linkKey(e);
    if (links.has(link)) gone.set(link, (gone.get(link) ?? true) && !now.has(errorKey(e)));
  }
  for (const e of after) if (gone.get(linkKey(e))) links.delete(linkKey(e));
}

/**
 * A's errors, then B's, each source as listed: the order does not depend on which source was polled last (two watch
 * nodes of one instrument, one source each, would otherwise turn the list round at every poll, a document each time).
 */
function bySource(list: PendingErrorView[]): PendingErrorView[] {
  return [...list.filter((e) => e.source === 'A'), ...list.filter((e) => e.source !== 'A')];
}

/** `memory` after `event` (a new document object when anything changed; the same one otherwise). */
export function fold(memory: StateMemory, event: LabEvent, now: number): StateMemory {
  const doc = memory.doc;
  let next: StateDocument = doc;
  let pending = memory.pending;
  const links = memory.links;
  switch (event.kind) {
    case 'errors': {
      // a list of some sources replaces only their errors (two poll nodes of one instrument may poll one each)
      const before = pending;
      pending = bySource(
        unique([
          ...(event.sources ? pending.filter((e) => !event.sources?.includes(e.source)) : []),
          ...event.pending.map(shownError),
        ]),
      );
      dropReusedLinks(before, pending, links);
      next = { ...doc, errors: errorsOf(pending, links) };
      break;
    }
    case 'raised': {
      // after its poll's list (`listed`): that list says what is pending. A raise it does not show (a later holder
      // sending again what an earlier one raised, now gone) would show an error the instrument no longer has.
      if (event.listed) return memory;
      const shown = shownError(event.error);
      const key = errorKey(shown);
      if (!pending.some((e) => errorKey(e) === key)) pending = [...pending, shown];
      next = { ...doc, errors: errorsOf(pending, links) };
      break;
    }
    case 'resolved': {
      const key = errorKey(shownError(event.error));
      // after its poll's list: an error that list still shows under this id, title and severity is another one (an id
      // reused for an error of the same title, told apart by its time stamp): it stays
      if (!event.listed) pending = pending.filter((e) => errorKey(e) !== key);
      const link = linkKey(event.error);
      if (!pending.some((e) => linkKey(e) === link)) links.delete(link);
      next = { ...doc, errors: errorsOf(pending, links) };
      break;
    }
    case 'link':
      links.delete(linkKey(event));
      links.set(linkKey(event), { url: event.answerUrl, expires: event.answerExpires });
      while (links.size > MAX_LINKS) links.delete(links.keys().next().value as string);
      next = { ...doc, errors: errorsOf(pending, links) };
      break;
    case 'connection':
      next = { ...doc, connection: { state: event.state, reason: event.reason ? clip(event.reason) : null } };
      break;
    case 'lease':
      if (event.lost) break; // every replica watches and tells the connection it sees: not a standby
      if (!event.holder) next = { ...doc, connection: { state: 'standby', reason: 'another Node-RED holds the lease' } };
      else if (doc.connection.state === 'standby') next = { ...doc, connection: { state: 'unknown', reason: null } };
      break;
    case 'run':
      next = {
        ...doc,
        run: {
          state: event.state === null ? null : clip(event.state),
          protocol: event.protocol === undefined ? doc.run.protocol : event.protocol === null ? null : clip(event.protocol),
          step: event.step === undefined ? doc.run.step : event.step === null ? null : clip(event.step),
          progress: event.progress === undefined ? doc.run.progress : event.progress,
          // the instrument's end time as it wrote it: a date with a comment of any length parses ("1 jan 2027 10:00 (…)")
          eta: event.eta === undefined ? doc.run.eta : event.eta === null ? null : clip(event.eta),
        },
      };
      break;
    case 'machine':
      next = {
        ...doc,
        door: event.doorClosed === undefined ? doc.door : event.doorClosed ? 'closed' : 'open',
        systemReady: event.systemReady === undefined ? doc.systemReady : event.systemReady,
      };
      break;
    case 'password':
      next = { ...doc, passwordExpiresInDays: event.expiresInDays };
      break;
    default:
      return memory;
  }
  if (sameState(next, doc)) return pending === memory.pending ? memory : { doc, pending, links };
  return { doc: { ...next, updatedAt: new Date(now).toISOString() }, pending, links };
}

/** Whether two documents say the same (their time stamps aside). */
export function sameState(a: StateDocument, b: StateDocument): boolean {
  return JSON.stringify({ ...a, updatedAt: '' }) === JSON.stringify({ ...b, updatedAt: '' });
}

/**
 * Whether a code point may not stand in an MQTT topic: the wildcards `+` and `#`, the level separator `/`, and what a
 * broker refuses as malformed UTF-8 and answers by dropping the connection (MQTT 3.1.1 §1.5.3, mosquitto): NUL, C0
 * and C1 control characters, DEL, a lone UTF-16 surrogate, a Unicode noncharacter (U+FDD0–U+FDEF, U+xxFFFE, U+xxFFFF).
 */
function notInTopic(c: string): boolean {
  const cp = c.codePointAt(0) ?? 0;
  return (
    c === '+' ||
    c === '#' ||
    c === '/' ||
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    (cp >= 0xfdd0 && cp <= 0xfdef) ||
    (cp & 0xfffe) === 0xfffe
  );
}

/** The longest topic template (UTF-16 units), as lh-state's dialog takes it. */
export const MAX_TOPIC_TEMPLATE = 200;

/**
 * Whether a topic template (lh-state's State topic, Event topics) makes a topic a broker takes whatever the name put
 * in for `{{instrument}}`: at most 200 characters, no wildcard `+` or `#`, none of the characters a broker refuses
 * (see notInTopic: a control character in a hand-written flow would get the mqtt out node's connection dropped).
 */
export function topicTemplateOk(template: string): boolean {
  if (template.length > MAX_TOPIC_TEMPLATE) return false;
  return ![...template.split('{{instrument}}').join('')].some((c) => c !== '/' && notInTopic(c));
}

/** The longest topic level made from a name (UTF-16 units; a character is never cut in two). */
const MAX_LEVEL = 64;

/**
 * An MQTT topic level from an instrument name: the wildcards `+` and `#`, the level separator `/`, and every character
 * a broker refuses (control characters, lone surrogates, noncharacters: the broker would drop the mqtt out node's
 * connection, and every instrument's msgs with it) become `_`; at most 64 characters; never empty.
 */
export function topicLevel(name: string): string {
  let level = '';
  for (const c of [...name]
    .map((c) => (notInTopic(c) ? '_' : c))
    .join('')
    .trim()) {
    if (level.length + c.length > MAX_LEVEL) break;
    level += c;
  }
  return level === '' ? '_' : level;
}
