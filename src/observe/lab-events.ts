/**
 * What the package's watch nodes saw, for the whole process: the lh-state node and the metrics read it here instead
 * of each watching the instrument again. Publishers are the nodes that already watch (lh-error-poll for errors and
 * reachability, lh-run-watch for runs, the answering code for answers, lh-answer-page for links, the coordinator for
 * leases). A listener that throws is logged by nobody and stops nothing: publishing never fails a poll.
 *
 * Nothing here is keyed by instrument: an event names its instrument (`instrumentKey`, the lh-server's identity) and
 * each listener keeps what it needs.
 */
export type ErrorSource = 'A' | 'B';

/** One pending error as the state document shows it (no free text beyond the title the instrument gave). */
export interface PendingErrorView {
  source: ErrorSource;
  id: string;
  title: string;
  severity: string;
  /**
   * the responses the instrument offers (A's errorResponses), at most 10, each whole (a response over 200
   * characters, which lh-answer-error cannot send, is left out)
   */
  responses?: string[];
  /**
   * true when `title` is clipped (over 200 characters): it is not the instrument's title, so a page answering the
   * error as shown sends no title (the identity check then compares id and severity)
   */
  titleClipped?: boolean;
  /**
   * the error's whole identity as the watch saw it (a fingerprint: title, time stamp, group, severity), for an answer
   * link made from this view; the state document does not keep it
   */
  seen?: string;
  answerUrl?: string;
  /** until when the answer link works (ISO time) */
  answerExpires?: string;
}

interface About {
  instrumentKey: string;
  /** the lh-server's display name (never a URL with credentials); '' where the publisher does not know it */
  instrument: string;
}

/**
 * `listed` on a raised or resolved event: the 'errors' list of the same poll, published just before it, already says
 * what is pending (the instrument's word, which a later holder's sweep or a reused id cannot improve on). The state
 * document keeps that list's errors; the event is still told (lh-state's event msg, the metrics).
 *
 * `more` on a raised or resolved event: another event of the same change follows (an id reused: the old error
 * resolved, the new one raised), then one without `more` or a 'settled': a state document waits for it, so none shows
 * the step between (one error gone, the next not yet there). Each event's own msg still goes out at once.
 *
 * `change` on a raised, resolved or settled event: which change it belongs to (unique in the process): two changes
 * may be told at once (two watch nodes of one instrument, a frame's change during a poll's), and the end of one is
 * not the end of the other. Absent: any event without `more` (or a 'settled') ends it.
 */
export type LabEvent =
  | (About & {
      kind: 'errors';
      pending: PendingErrorView[];
      /** the sources this list covers (a poll node may poll one of A and B): the others' errors stay; absent: all */
      sources?: ErrorSource[];
    })
  | (About & {
      kind: 'raised';
      error: PendingErrorView;
      raisedAt: number;
      redelivered?: boolean;
      listed?: boolean;
      more?: boolean;
      change?: number;
    })
  | (About & {
      kind: 'resolved';
      error: PendingErrorView;
      raisedAt?: number;
      listed?: boolean;
      more?: boolean;
      change?: number;
    })
  /** the events of one change marked `more` are all told (the gate passed them one by one): a document may go out */
  | (About & { kind: 'settled'; change?: number })
  | (About & { kind: 'answered'; source: ErrorSource; id: string; by: AnsweredBy })
  | (About & { kind: 'link'; source: ErrorSource; id: string; answerUrl: string; answerExpires?: string })
  | (About & { kind: 'connection'; state: 'online' | 'offline'; reason?: string })
  | (About & {
      kind: 'run';
      state: string | null;
      /** a new run began with this change */
      started?: boolean;
      protocol?: string | null;
      step?: string | null;
      progress?: number | null;
      eta?: string | null;
    })
  | (About & { kind: 'run-finished'; result: string })
  | (About & { kind: 'machine'; doorClosed?: boolean; systemReady?: boolean })
  | (About & { kind: 'password'; expiresInDays: number | null })
  /**
   * `lost`: the coordination lost Redis (the lease lapses unrenewed; every replica watches and says what it sees): no
   * holder, and no standby either
   */
  | (About & { kind: 'lease'; holder: boolean; failover?: boolean; lost?: boolean })
  /**
   * an lh-server node of the instrument started (`present`) or closed: once none of that name is left (the node
   * removed, renamed, its Node-RED redeployed), what was last said of it is no longer so (the metrics' gauges)
   */
  | (About & { kind: 'server'; present: boolean });

/** Who gave an answer, in the bounded set the metrics label with. */
export type AnsweredBy = 'flow' | 'page' | 'policy' | 'other';

export type LabListener = (event: LabEvent) => void;

const listeners = new Set<LabListener>();

/** Listen to every lab event of this process; returns the call that stops listening. */
export function onLabEvent(listener: LabListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Whether anybody listens (publishers skip building an event nobody reads). */
export function labListened(): boolean {
  return listeners.size > 0;
}

export function publishLab(event: LabEvent): void {
  for (const listener of [...listeners]) {
    try {
      listener(event);
    } catch {
      // a listener's fault stays the listener's: the watch that published goes on
    }
  }
}

/** The audit writer's durable-sync times are published separately (no instrument name at that layer). */
const syncListeners = new Set<(seconds: number) => void>();
export function onAuditSync(listener: (seconds: number) => void): () => void {
  syncListeners.add(listener);
  return () => syncListeners.delete(listener);
}
export function publishAuditSync(seconds: number): void {
  for (const listener of [...syncListeners]) {
    try {
      listener(seconds);
    } catch {
      // as above
    }
  }
}

/** `flow`, `page`, `policy` from the answering code's "by" (a user name on the page counts as `page`). */
export function answeredBy(by: string | undefined, channel?: string): AnsweredBy {
  if (channel === 'page') return 'page';
  if (by === 'policy' || channel === 'policy') return 'policy';
  if (by === undefined || by === '' || by === 'flow' || channel === 'flow') return 'flow';
  return 'other';
}
