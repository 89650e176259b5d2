/**
 * The one place the watch nodes turn what they saw into lab events (src/observe/lab-events.ts) for lh-state and the
 * metrics: each hook in a node is one call here, and costs nothing while nobody listens.
 */
import { fingerprint, identityOf } from '../../client';
import { type LabEvent, labListened, type PendingErrorView, publishLab } from '../../observe/lab-events';
import { type InstrumentInfo, responseNames } from './error-records';
import type { ErrorSource, PolledError } from './poll-messages';
import { redact } from './redaction';
import type { LhServerNode } from './server-node';

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** What the state document shows of one error. */
export function errorView(source: ErrorSource, record: PolledError): PendingErrorView {
  const r = record as unknown as Record<string, unknown>;
  // a response whose name echoes a secret (`Retry password=…`) is left out: the answer page offers it, redacted
  const responses = source === 'A' ? responseNames(r.errorResponses).filter((name) => redact(name) === name) : [];
  const seen = identityOf(r);
  const title = text(r.title) || text(r.type) || 'Runtime error';
  // the document goes to a broker: a secret the instrument echoed into a title is taken out, and the title shown is
  // then not the instrument's (a page answering the error as shown leaves it out of the identity, as for a clipped one)
  const shown = redact(title);
  return {
    source,
    id: text(source === 'A' ? r.id : r.uuid),
    title: shown,
    ...(shown !== title ? { titleClipped: true } : {}),
    severity: text(r.severity) || 'Error',
    ...(responses.length > 0 ? { responses } : {}),
    ...(seen ? { seen: fingerprint(seen) } : {}),
  };
}

/** The current step as the document shows it: its name, or its number/text, or null (bounded to 200 characters there). */
export function stepName(step: unknown): string | null {
  if (step === null || step === undefined) return null;
  if (typeof step === 'string' || typeof step === 'number') return String(step);
  if (typeof step === 'object') {
    const s = step as Record<string, unknown>;
    const name = s.name ?? s.stepName ?? s.title ?? s.id;
    return typeof name === 'string' || typeof name === 'number' ? String(name) : null;
  }
  return null;
}

/** The instrument's time stamp of an error in ms (a date without a zone is UTC, as the instrument writes it). */
export function stampOf(source: ErrorSource, record: PolledError): number {
  const r = record as unknown as Record<string, unknown>;
  const raw = text(source === 'A' ? (r.timeStamp ?? r.date) : (r.date ?? r.timeStamp));
  if (raw === '') return NaN;
  const zoned = /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(raw) || !/\d{2}:\d{2}/.test(raw) ? raw : `${raw}Z`;
  return Date.parse(zoned);
}

interface Marks {
  listed?: boolean;
  more?: boolean;
  change?: number;
}

let changes = 0;
/** A new change's id (see LabEvent `change`): unique in the process. */
export function newChange(): number {
  changes = (changes + 1) % Number.MAX_SAFE_INTEGER;
  return changes;
}

/** Only the marks that are set (an event without them is as before). */
function marked(marks: Marks): Marks {
  return {
    ...(marks.listed ? { listed: true } : {}),
    ...(marks.more ? { more: true } : {}),
    ...(marks.change !== undefined ? { change: marks.change } : {}),
  };
}

export class LabPublisher {
  constructor(
    private readonly server: Pick<LhServerNode, 'instrumentKey'>,
    private readonly instrument: InstrumentInfo,
  ) {}

  private get about(): { instrumentKey: string; instrument: string } {
    return { instrumentKey: this.server.instrumentKey, instrument: this.instrument.name };
  }

  /**
   * The errors the instrument lists now (every polled source that answered; a source that failed: no list). Returns
   * whether a list went out: the poll's raised and resolved events then say `listed`.
   */
  pending(lists: readonly { source: ErrorSource; records?: readonly PolledError[] }[]): boolean {
    if (!labListened() || lists.some((l) => l.records === undefined)) return false;
    const pending = lists.flatMap((l) => (l.records ?? []).map((r) => errorView(l.source, r)));
    publishLab({ ...this.about, kind: 'errors', pending, sources: lists.map((l) => l.source) });
    return true;
  }

  /**
   * `listed`: the list of this poll went out just before; `more`: another event of the same change follows (see
   * LabEvent); `redelivered`: a new holder sends it again.
   */
  raised(source: ErrorSource, record: PolledError, marks: Marks & { redelivered?: boolean } = {}): void {
    if (!labListened()) return;
    const raisedAt = stampOf(source, record);
    const { redelivered, ...rest } = marks;
    publishLab({
      ...this.about,
      kind: 'raised',
      error: errorView(source, record),
      raisedAt,
      ...(redelivered ? { redelivered } : {}),
      ...marked(rest),
    });
  }

  resolved(source: ErrorSource, record: PolledError, marks: Marks = {}): void {
    if (labListened()) publishLab({ ...this.about, kind: 'resolved', error: errorView(source, record), ...marked(marks) });
  }

  /** The events of one change told with `more` are all out. */
  settled(change?: number): void {
    if (labListened()) publishLab({ ...this.about, kind: 'settled', ...(change !== undefined ? { change } : {}) });
  }

  /**
   * `reason` without any secret: an instrument's 5xx detail may echo the request (a login's password), and the reason
   * goes into a retained MQTT document and the fleet tab
   */
  connection(state: 'online' | 'offline', reason?: string): void {
    if (labListened())
      publishLab({ ...this.about, kind: 'connection', state, reason: reason === undefined ? undefined : redact(reason) });
  }

  password(expiresInDays: number | null): void {
    if (labListened()) publishLab({ ...this.about, kind: 'password', expiresInDays });
  }

  link(source: ErrorSource, id: string, answerUrl: string): void {
    if (labListened()) publishLab({ ...this.about, kind: 'link', source, id, answerUrl });
  }

  run(change: Omit<Extract<LabEvent, { kind: 'run' }>, 'kind' | 'instrumentKey' | 'instrument'>): void {
    if (labListened()) publishLab({ ...this.about, kind: 'run', ...change });
  }

  runFinished(result: string): void {
    if (labListened()) publishLab({ ...this.about, kind: 'run-finished', result });
  }
}
