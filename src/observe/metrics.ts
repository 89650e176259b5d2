/**
 * The package's metrics in the Prometheus text format (prom-client), read from the lab events. A registry of its
 * own (never prom-client's global one, which a user's flow may use). Label values are bounded: instrument names (at
 * most MAX_INSTRUMENTS, later ones count as "other"), sources A/B, a fixed set of severities, who answered and run
 * results; never an error id, a free text or a URL.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { type LabEvent, onAuditSync, onLabEvent } from './lab-events';
import { wholeCharactersWithin } from './whole-characters';

export const MAX_INSTRUMENTS = 1000;
/**
 * Instruments whose reports are kept (their label's gauges say them all; "other" folds every instrument past the first
 * 1,000 names): a lab's whole fleet. A report costs its own instrument's keys, never its label's.
 */
export const MAX_PENDING_KEYS = 20 * MAX_INSTRUMENTS;
const MAX_RAISE_TIMES = 20000;
const SEVERITIES = new Set(['fatal', 'error', 'warning', 'info']);
const RESULTS = new Set(['completed', 'aborted', 'failed', 'unknown']);

export function severityLabel(severity: string): string {
  const s = severity.trim().toLowerCase();
  if (s === 'information') return 'info';
  return SEVERITIES.has(s) ? s : 'other';
}

export function resultLabel(result: string): string {
  const r = result.trim().toLowerCase();
  return RESULTS.has(r) ? r : 'unknown';
}

/**
 * An instrument name that is a URL (an lh-server without a name is called by its base URL as written) as its host and
 * port: no URL, path or query is ever a label.
 */
export function hostOfUrl(name: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(name)) return name;
  try {
    return new URL(name).host || '_';
  } catch {
    return name.replace(/^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*).*$/is, '$1') || '_';
  }
}

/** The longest instrument label (UTF-16 units). */
const MAX_LABEL = 64;

/** A name clipped to MAX_LABEL units, never cutting a character in two (a lone surrogate is written as U+FFFD). */
export function clipLabel(name: string): string {
  // two names told apart by a lone surrogate half alone are one label (the page writes both halves as U+FFFD)
  return wholeCharactersWithin(name, MAX_LABEL).replace(/\p{Cs}/gu, '\ufffd');
}

/** What this Node-RED last saw of one instrument key (see LabMetrics `seen`). */
interface Seen {
  identity: string;
  label: string;
  pending?: Map<string, number>;
  pendingAt: number;
  up?: number;
  upAt: number;
}

/**
 * The gauges of one label, kept as they go (a report costs the keys of its own instrument, not the label's: "other"
 * holds a thousand instruments and more): each instrument (identity) under it counts by its latest report.
 */
interface Fold {
  /** the keys under the label by the instrument they name (two keys of one instrument: its URLs spelled two ways) */
  byIdentity: Map<string, Set<string>>;
  /** the sum of the instruments' pending counts, and how many said one */
  pendingSum: number;
  pendingN: number;
  /** how many instruments said their reachability, and how many of them are offline */
  upN: number;
  offline: number;
}

function total(counts: Map<string, number> | undefined): number {
  let sum = 0;
  for (const n of counts?.values() ?? []) sum += n;
  return sum;
}

export class LabMetrics {
  readonly registry = new Registry();
  private readonly names = new Set<string>();
  /** the latest instrument name of each instrument key seen (answers are published by key alone) */
  private readonly nameOf = new Map<string, string>();
  /** when this process saw each pending error raised and its severity (for time to answer), oldest dropped first */
  private readonly raisedAt = new Map<string, { at: number; severity: string }>();
  /**
   * what this Node-RED last saw of each instrument key (its poll's pending counts by source, its reachability), at
   * most MAX_PENDING_KEYS: the gauges of a label say every instrument under it (names alike in their first 64
   * characters, one host's unnamed lh-servers, the instruments past MAX_INSTRUMENTS folded into "other")
   */
  private readonly seen = new Map<string, Seen>();
  /** the keys of `seen` under each label, and the label's gauges from them */
  private readonly folds = new Map<string, Fold>();
  /** the order of the reports (one instrument under two keys, its URLs spelled two ways: the latest report counts) */
  private seq = 0;
  private readonly raised: Counter<'instrument' | 'source' | 'severity'>;
  private readonly answered: Counter<'instrument' | 'source' | 'severity' | 'by'>;
  private readonly toAnswer: Histogram<'source'>;
  private readonly runsStarted: Counter<'instrument'>;
  private readonly runsFinished: Counter<'instrument' | 'result'>;
  private readonly up: Gauge<'instrument'>;
  private readonly detection: Histogram<'source'>;
  private readonly auditSync: Histogram;
  private readonly holder: Gauge<'instrument'>;
  private readonly failovers: Counter<'instrument'>;
  private readonly pending: Gauge<'instrument'>;
  private readonly stops: (() => void)[] = [];
  /** the lh-server nodes running now, by instrument label: the gauges of a label none is left of are taken off */
  private readonly servers = new Map<string, number>();
  /** the lh-server nodes running now, by instrument key: what was seen of a key none is left of leaves its label */
  private readonly serversOfKey = new Map<string, number>();
  /**
   * the instrument keys this Node-RED stands by for (another holds the lease and polls): their up and pending gauges
   * are the holder's to say; what this one last saw as holder is no longer so
   */
  private readonly standby = new Set<string>();

  /**
   * `identityOf`: the instrument an instrument key names, however its URLs are spelled (the coordination's identity,
   * given by the caller: two lh-server nodes of one instrument under one name count once in its label's gauges)
   */
  constructor(
    /** the wall clock: detection latency compares it with the instrument's time stamps */
    private readonly now: () => number = Date.now,
    private readonly identityOf: (instrumentKey: string) => string = (key) => key,
    /**
     * the monotonic clock, for the time from raised to answered (two readings here): a step of the wall clock (NTP, a
     * resumed VM) between them would add a day to it, or make it 0
     */
    private readonly elapsed: () => number = () => performance.now(),
  ) {
    const registers = [this.registry];
    this.raised = new Counter({
      name: 'lh_errors_raised_total',
      help: 'Runtime errors raised (emitted once each by lh-error-poll)',
      labelNames: ['instrument', 'source', 'severity'],
      registers,
    });
    this.answered = new Counter({
      name: 'lh_errors_answered_total',
      help: 'Runtime errors answered by this package, by who answered (flow, page, policy)',
      labelNames: ['instrument', 'source', 'severity', 'by'],
      registers,
    });
    this.toAnswer = new Histogram({
      name: 'lh_error_time_to_answer_seconds',
      help: 'Time from an error being raised to its answer, as this Node-RED saw both',
      labelNames: ['source'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    });
    this.runsStarted = new Counter({
      name: 'lh_runs_started_total',
      help: 'Protocol runs seen starting (lh-run-watch)',
      labelNames: ['instrument'],
      registers,
    });
    this.runsFinished = new Counter({
      name: 'lh_runs_finished_total',
      help: 'Protocol runs seen finishing, by result',
      labelNames: ['instrument', 'result'],
      registers,
    });
    this.up = new Gauge({
      name: 'lh_instrument_up',
      help: '1 while the instrument answers, 0 while it is offline',
      labelNames: ['instrument'],
      registers,
    });
    this.detection = new Histogram({
      name: 'lh_error_detection_seconds',
      help: "Time from the instrument's time stamp of an error to its raised msg (includes the clocks' difference)",
      labelNames: ['source'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.auditSync = new Histogram({
      name: 'lh_audit_sync_seconds',
      help: 'Time to make an audit record durable (fdatasync of the chain file, or the Redis write)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.holder = new Gauge({
      name: 'lh_coordination_lease_holder',
      help: "1 while this Node-RED holds the instrument's lease (lh-coordination), 0 while it stands by",
      labelNames: ['instrument'],
      registers,
    });
    this.failovers = new Counter({
      name: 'lh_coordination_failovers_total',
      help: 'Leases this Node-RED took over from another replica (not one taken back from itself after Redis lost its data)',
      labelNames: ['instrument'],
      registers,
    });
    this.pending = new Gauge({
      name: 'lh_errors_pending',
      help: 'Runtime errors pending on the instrument, as the last poll listed them',
      labelNames: ['instrument'],
      registers,
    });
    this.stops.push(onLabEvent((event) => this.observe(event)));
    this.stops.push(onAuditSync((seconds) => this.auditSync.observe(seconds)));
  }

  /** A bounded instrument label: its name, or "other" past MAX_INSTRUMENTS names. */
  private instrument(event: LabEvent): string {
    // the name it has now: an lh-server renamed in a redeploy (the same instrument) counts its answers under the new name
    if (event.instrument !== '' && (this.nameOf.has(event.instrumentKey) || this.nameOf.size < MAX_INSTRUMENTS))
      this.nameOf.set(event.instrumentKey, event.instrument);
    const name = hostOfUrl(event.instrument || this.nameOf.get(event.instrumentKey) || 'unknown');
    const label = clipLabel(name) || '_';
    if (this.names.has(label)) return label;
    if (this.names.size >= MAX_INSTRUMENTS) return 'other';
    this.names.add(label);
    return label;
  }

  observe(event: LabEvent): void {
    const instrument = this.instrument(event);
    switch (event.kind) {
      case 'raised': {
        const byId = `${event.instrumentKey}|${event.error.source}|${event.error.id}`;
        // one error: its id and its title (two errors listed under one id with different titles are two raises)
        const key = `${byId}|${event.error.title}`;
        // two watch nodes of one instrument publish the same raise: counted once while it is pending
        if (this.raisedAt.has(key) && !event.redelivered) break;
        const severity = severityLabel(event.error.severity);
        if (!this.raisedAt.has(key)) this.raised.inc({ instrument, source: event.error.source, severity });
        this.raisedAt.delete(key);
        this.raisedAt.set(key, { at: this.elapsed(), severity });
        this.raisedAt.delete(byId); // an answer names the id alone: it finds the error raised last under it
        this.raisedAt.set(byId, { at: this.elapsed(), severity });
        while (this.raisedAt.size > MAX_RAISE_TIMES) this.raisedAt.delete(this.raisedAt.keys().next().value as string);
        const latency = (this.now() - event.raisedAt) / 1000;
        if (Number.isFinite(latency) && latency >= 0) this.detection.observe({ source: event.error.source }, latency);
        break;
      }
      case 'resolved':
        this.raisedAt.delete(`${event.instrumentKey}|${event.error.source}|${event.error.id}|${event.error.title}`);
        this.raisedAt.delete(`${event.instrumentKey}|${event.error.source}|${event.error.id}`);
        break;
      case 'answered': {
        const key = `${event.instrumentKey}|${event.source}|${event.id}`;
        const raised = this.raisedAt.get(key);
        this.answered.inc({ instrument, source: event.source, severity: raised?.severity ?? 'other', by: event.by });
        if (raised) this.toAnswer.observe({ source: event.source }, Math.max(0, this.elapsed() - raised.at) / 1000);
        break;
      }
      case 'errors': {
        if (this.standby.has(event.instrumentKey)) break; // a poll that ended after the lease went elsewhere
        // per source: a list of source B says nothing of source A's errors (two poll nodes, one source each)
        const seen = this.entry(event.instrumentKey, instrument);
        const counts = new Map(seen?.pending); // a copy: its share before the report is taken out of the label first
        if (!event.sources) counts.clear();
        for (const source of event.sources ?? ['A', 'B']) counts.set(source, 0);
        for (const e of event.pending) counts.set(e.source, (counts.get(e.source) ?? 0) + 1);
        if (seen) this.change(seen, () => Object.assign(seen, { pending: counts, pendingAt: ++this.seq }));
        this.refresh(instrument, seen ? undefined : { pending: total(counts) });
        break;
      }
      case 'connection': {
        if (this.standby.has(event.instrumentKey)) break;
        const up = event.state === 'online' ? 1 : 0;
        const seen = this.entry(event.instrumentKey, instrument);
        if (seen) this.change(seen, () => Object.assign(seen, { up, upAt: ++this.seq }));
        this.refresh(instrument, seen ? undefined : { up });
        break;
      }
      case 'run':
        if (event.started) this.runsStarted.inc({ instrument });
        break;
      case 'run-finished':
        this.runsFinished.inc({ instrument, result: resultLabel(event.result) });
        break;
      case 'server': {
        const ofKey = (this.serversOfKey.get(event.instrumentKey) ?? 0) + (event.present ? 1 : -1);
        if (ofKey > 0) this.serversOfKey.set(event.instrumentKey, ofKey);
        else {
          // no lh-server of this instrument key left: what was seen of it leaves its label's gauges
          this.serversOfKey.delete(event.instrumentKey);
          this.standby.delete(event.instrumentKey);
          this.forget(event.instrumentKey);
        }
        const running = (this.servers.get(instrument) ?? 0) + (event.present ? 1 : -1);
        if (running > 0) {
          this.servers.set(instrument, running);
          break;
        }
        this.servers.delete(instrument);
        // no lh-server of that name any more: its last up, pending and lease holder values are no longer true (an
        // instrument renamed or removed would stay "up" with its errors pending, a second lease holder, until a restart)
        const fold = this.folds.get(instrument);
        for (const keys of [...(fold?.byIdentity.values() ?? [])]) for (const key of [...keys]) this.forget(key);
        for (const gauge of [this.up, this.pending, this.holder]) gauge.remove({ instrument });
        break;
      }
      case 'lease': {
        this.holder.set({ instrument }, event.holder ? 1 : 0);
        if (event.failover) this.failovers.inc({ instrument });
        if (event.holder || event.lost) {
          this.standby.delete(event.instrumentKey); // it polls (again): its next poll says
          break;
        }
        // a standby does not poll: up and pending as it last saw them would stay for ever (an alert on pending errors
        // firing from the standby's page after the holder saw them answered); the holder's page says them
        if (this.standby.size < MAX_INSTRUMENTS) this.standby.add(event.instrumentKey);
        const seen = this.seen.get(event.instrumentKey);
        if (seen) this.change(seen, () => Object.assign(seen, { pending: undefined, up: undefined }));
        this.refresh(seen?.label ?? instrument); // the others' under its label stay
        break;
      }
      default:
        break;
    }
  }

  /**
   * What is kept of an instrument key, now under `label` (a key renamed leaves its old label's gauges); undefined past
   * MAX_PENDING_KEYS keys (that instrument's report then counts at the time it comes only).
   */
  private entry(key: string, label: string): Seen | undefined {
    let seen = this.seen.get(key);
    if (seen === undefined) {
      if (this.seen.size >= MAX_PENDING_KEYS) return undefined;
      seen = { identity: this.identityOf(key), label, pendingAt: 0, upAt: 0 };
      this.seen.set(key, seen);
      this.join(key, seen);
    } else if (seen.label !== label) {
      const moved = seen;
      const old = moved.label;
      this.change(moved, () => this.leave(key, moved));
      moved.label = label;
      this.change(moved, () => this.join(key, moved));
      this.refresh(old);
    }
    return seen;
  }

  private foldOf(label: string): Fold {
    let fold = this.folds.get(label);
    if (fold === undefined) {
      fold = { byIdentity: new Map(), pendingSum: 0, pendingN: 0, upN: 0, offline: 0 };
      this.folds.set(label, fold);
    }
    return fold;
  }

  private join(key: string, seen: Seen): void {
    const byIdentity = this.foldOf(seen.label).byIdentity;
    byIdentity.set(seen.identity, (byIdentity.get(seen.identity) ?? new Set<string>()).add(key));
  }

  private leave(key: string, seen: Seen): void {
    const fold = this.folds.get(seen.label);
    const keys = fold?.byIdentity.get(seen.identity);
    keys?.delete(key);
    if (keys?.size === 0) fold?.byIdentity.delete(seen.identity);
    if (fold?.byIdentity.size === 0) this.folds.delete(seen.label);
  }

  /** An instrument's share of its label's gauges: its keys' latest report of each (none: undefined). */
  private share(label: string, identity: string): { pending?: number; up?: number } {
    let pending: { n: number; at: number } | undefined;
    let up: { n: number; at: number } | undefined;
    for (const key of this.folds.get(label)?.byIdentity.get(identity) ?? []) {
      const s = this.seen.get(key);
      if (s?.pending && (pending?.at ?? -1) < s.pendingAt) pending = { n: total(s.pending), at: s.pendingAt };
      if (s?.up !== undefined && (up?.at ?? -1) < s.upAt) up = { n: s.up, at: s.upAt };
    }
    return { pending: pending?.n, up: up?.n };
  }

  /** What was seen of a key changed by `what`: its instrument's share of its label taken out before, put in after. */
  private change(seen: Seen, what: () => void): void {
    const { label, identity } = seen;
    this.add(label, this.share(label, identity), -1);
    what();
    if (this.folds.has(label)) this.add(label, this.share(label, identity), 1);
  }

  private add(label: string, share: { pending?: number; up?: number }, sign: 1 | -1): void {
    const fold = this.folds.get(label);
    if (fold === undefined) return;
    if (share.pending !== undefined) {
      fold.pendingSum += sign * share.pending;
      fold.pendingN += sign;
    }
    if (share.up !== undefined) {
      fold.upN += sign;
      if (share.up === 0) fold.offline += sign;
    }
  }

  /** What was seen of an instrument key, forgotten (its lh-server gone): its label's gauges without it. */
  private forget(key: string): void {
    const seen = this.seen.get(key);
    if (seen === undefined) return;
    this.change(seen, () => this.leave(key, seen));
    this.seen.delete(key);
    this.refresh(seen.label);
  }

  /**
   * The gauges of a label from every instrument under it (one instrument under two keys counted once, by its latest
   * report): pending their sum, up 0 while any is offline; none known, no gauge. `unkept`: the report of an instrument
   * past MAX_PENDING_KEYS, counted with them.
   */
  private refresh(label: string, unkept: { pending?: number; up?: number } = {}): void {
    const fold = this.folds.get(label);
    if ((fold?.pendingN ?? 0) > 0 || unkept.pending !== undefined)
      this.pending.set({ instrument: label }, (fold?.pendingSum ?? 0) + (unkept.pending ?? 0));
    else this.pending.remove({ instrument: label });
    if ((fold?.upN ?? 0) > 0 || unkept.up !== undefined)
      this.up.set({ instrument: label }, (fold?.offline ?? 0) > 0 || unkept.up === 0 ? 0 : 1);
    else this.up.remove({ instrument: label });
  }

  /** The page a Prometheus server scrapes. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
  }
}
