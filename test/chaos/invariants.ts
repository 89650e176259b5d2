/**
 * The promises a chaos run checks, as pure functions over what the run observed (times are epoch ms of the harness'
 * clock, which the simulators and the collector share):
 *  (a) no error that stayed pending for two leases while a live replica knew its instrument went unraised;
 *  (b) none raised twice unless marked: `msg.redelivered = true`, or `msg.coordination = 'lost'` (sent while Redis
 *      was out of reach, which the package documents as "it may come twice");
 *  (c) no answer sent after the instrument accepted one for that error (the simulators' logs);
 *  (d) every instrument known to a live replica held by one of them within two leases (the lease keys in Redis);
 *  (e) every write the simulators received has an intent record in the instrument's chain, and the chains verify.
 */
export const INVARIANTS = ['a', 'b', 'c', 'd', 'e'] as const;
export type Invariant = (typeof INVARIANTS)[number];

export const INVARIANT_TEXT: Record<Invariant, string> = {
  a: 'no error pending for two leases while a live replica knew its instrument went unraised',
  b: "none raised twice unless marked (msg.redelivered, or msg.coordination 'lost')",
  c: 'no answer sent twice for one error',
  d: 'every instrument known to a live replica held by one of them within two leases',
  e: 'every write the instrument received has an intent in a chain that verifies',
};

/** A replica running flows that list these instruments, not stopped, from `from` to `to`. */
export interface LiveSpan {
  replica: string;
  pid: number;
  instruments: readonly number[];
  from: number;
  to: number;
}

/** An error the harness put on a simulator. */
export interface Injected {
  n: number;
  instrument: number;
  source: 'A' | 'B';
  /** the A id or the B uuid */
  id: string;
  at: number;
  /** when a person answered it at the instrument (the harness resolved it), if that happened */
  resolvedAt?: number;
}

/** A msg a replica sent to the collector. */
export interface Emitted {
  kind: string;
  /** the error's number from its title, when the msg is about one of ours */
  n?: number;
  redelivered: boolean;
  /** sent while Redis could not be reached (`msg.coordination = 'lost'`: the package says it may come twice) */
  lost: boolean;
  replica: string;
  at: number;
  /** `msg.redeliveryReason` of a redelivered msg (the report shows it) */
  reason?: string;
}

/** A non-GET request a simulator received (its log entry: status 0 when it got no answer). */
export interface Write {
  instrument: number;
  api: 'A' | 'B';
  method: string;
  path: string;
  /** body.id (A answers) or the uuid (B submissions), when there is one */
  target?: string;
  status: number;
  time: number;
}

/** B: how the simulator's record of an error ended. */
export interface BOutcome {
  id: string;
  instrument: number;
  /** when a submission was accepted (absent when none was: resolved at the instrument, or still pending) */
  acceptedAt?: number;
}

export interface Intent {
  instrument: number;
  api: string;
  method: string;
  path: string;
  target?: string;
  at: number;
}

export interface LeaseSample {
  instrument: number;
  at: number;
  /** false when Redis could not be read */
  read: boolean;
  holderPid?: number;
}

/** Audit data lost with Redis (FLUSHALL, a restart without the data): intents seen up to `readAt`, lost at `lostAt`. */
export interface AuditLoss {
  readAt: number;
  lostAt: number;
}

export interface ChainCheck {
  instrument: number;
  at: number;
  /** no record altered, inserted, removed or repeated (a gap the writer declared is not tampering) */
  ok: boolean;
  reason?: string;
  /** gaps the writers declared (records Redis lost): fine after a loss the run made, tampering before any */
  gaps?: number;
}

export interface Observation {
  leaseMs: number;
  pollMs: number;
  /** slack for a loaded machine (process start, event loop delays) */
  graceMs: number;
  end: number;
  spans: LiveSpan[];
  injected: Injected[];
  emitted: Emitted[];
  writes: Write[];
  bOutcomes: BOutcome[];
  intents: Intent[];
  leases: LeaseSample[];
  losses: AuditLoss[];
  chains: ChainCheck[];
}

export interface Violation {
  invariant: Invariant;
  text: string;
}

export interface Verdict {
  violations: Violation[];
  /** checks made per invariant (each one a case that could have failed) */
  checks: Record<Invariant, number>;
  /** writes without an intent that were made in the moment between the last read of a chain and its loss */
  excusedWrites: number;
}

/** Merges intervals into disjoint ones, sorted. */
export function union(intervals: readonly { from: number; to: number }[]): { from: number; to: number }[] {
  const sorted = intervals.filter((i) => i.to > i.from).sort((a, b) => a.from - b.from);
  const out: { from: number; to: number }[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.from <= last.to) last.to = Math.max(last.to, i.to);
    else out.push({ ...i });
  }
  return out;
}

/** The longest stretch of [from, to) inside the union of `covered`. */
export function longestCovered(from: number, to: number, covered: readonly { from: number; to: number }[]): number {
  let best = 0;
  for (const c of covered) best = Math.max(best, Math.min(to, c.to) - Math.max(from, c.from));
  return best;
}

/** When the error stopped being pending: answered (accepted), or answered by a person at the instrument. */
function goneAt(e: Injected, o: Observation, accepted: Map<number, number>): number {
  return Math.min(e.resolvedAt ?? o.end, accepted.get(e.n) ?? o.end, o.end);
}

/** The injected error an A answer is about: the latest with that id injected before the request. */
/**
 * The error an A answer (known only by its id) was for: the error injected last under that id before it (an id the
 * instrument reused); but where two errors are listed under one id (twins, both pending when the answer was sent) and
 * the instrument cannot tell which one an answer is for, the earliest of them that no accepted answer took yet, so a
 * pair of twins may take one accepted answer each (seeds 1130 and 2207 counted the answer to one twin against the other).
 */
function errorOfAnswer(w: Write, injected: readonly Injected[], taken: ReadonlySet<number>): Injected | undefined {
  const under = injected.filter((e) => e.instrument === w.instrument && e.id === w.target && e.at <= w.time);
  const pending = under.filter((e) => !taken.has(e.n) && (e.resolvedAt === undefined || e.resolvedAt > w.time));
  if (pending.length > 1) return pending.reduce((a, b) => (b.at < a.at ? b : a));
  return under.reduce<Injected | undefined>((a, b) => (!a || b.at >= a.at ? b : a), undefined);
}

export function isAnswer(w: Pick<Write, 'api' | 'method' | 'path'>): boolean {
  if (w.api === 'A') return w.method === 'PUT' && w.path === '/api/v1/errors/runtime';
  return w.method === 'POST' && /^\/api\/vector\/v3\/instrument-errors\/[^/]+\/(recovery|action)$/.test(w.path);
}

/** A path without its interface's prefix (the simulator logs `/api/v1/errors/runtime`, an intent `/errors/runtime`). */
export function apiPath(path: string): string {
  return path.replace(/^\/api\/(v1|vector\/v3)(?=\/)/, '');
}

/** Session requests are not instrument changes: never audited. */
export function isSessionRequest(w: Pick<Write, 'method' | 'path'>): boolean {
  return /^\/api\/v1\/authenticate(\/renew-token)?$/.test(w.path);
}

export function check(o: Observation): Verdict {
  const violations: Violation[] = [];
  const checks: Record<Invariant, number> = { a: 0, b: 0, c: 0, d: 0, e: 0 };
  const twoLeases = 2 * o.leaseMs + 2 * o.pollMs + o.graceMs;

  // answers per error, and when the instrument accepted the first
  const answers = new Map<number, Write[]>();
  const taken = new Set<number>();
  for (const w of [...o.writes].sort((x, y) => x.time - y.time)) {
    if (!isAnswer(w)) continue;
    const e =
      w.api === 'A'
        ? errorOfAnswer(w, o.injected, taken)
        : o.injected.find((x) => x.source === 'B' && x.instrument === w.instrument && x.id === w.target);
    if (!e) continue;
    answers.set(e.n, [...(answers.get(e.n) ?? []), w]);
    if (w.status >= 200 && w.status < 300) taken.add(e.n);
  }
  const accepted = new Map<number, number>();
  for (const e of o.injected) {
    if (e.source === 'A') {
      const first = (answers.get(e.n) ?? []).filter((w) => w.status >= 200 && w.status < 300).sort((x, y) => x.time - y.time)[0];
      if (first) accepted.set(e.n, first.time);
    } else {
      const b = o.bOutcomes.find((x) => x.instrument === e.instrument && x.id === e.id);
      if (b?.acceptedAt !== undefined) accepted.set(e.n, b.acceptedAt);
    }
  }

  const injectedBy = new Map(o.injected.map((e) => [e.n, e]));
  const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const raised = new Map<number, Emitted[]>();
  for (const m of o.emitted) if (m.kind === 'raised' && m.n !== undefined) raised.set(m.n, [...(raised.get(m.n) ?? []), m]);

  // (a)
  for (const e of o.injected) {
    const known = union(o.spans.filter((s) => s.instruments.includes(e.instrument)));
    const stretch = longestCovered(e.at, goneAt(e, o, accepted), known);
    if (stretch < twoLeases) continue;
    checks.a++;
    if ((raised.get(e.n) ?? []).length === 0)
      violations.push({
        invariant: 'a',
        text: `e${e.n} (i${e.instrument} ${e.source} ${e.id}) pending ${Math.round(stretch / 100) / 10} s while a live replica knew i${e.instrument}: never raised`,
      });
  }

  // (b)
  for (const [n, msgs] of raised) {
    checks.b++;
    // every raise but one is marked: a redelivery, or sent while Redis was out of reach (msg.coordination 'lost')
    const sorted = [...msgs].sort((x, y) => x.at - y.at);
    const unmarked = sorted.filter((m) => !m.redelivered && !m.lost);
    if (unmarked.length > 1) {
      // each raise with its time after the error appeared (and after it was resolved, if it was) and its reason
      const e = injectedBy.get(n);
      const when = (m: Emitted): string => {
        if (!e) return '';
        const after = e.resolvedAt !== undefined && m.at > e.resolvedAt ? `, ${secs(m.at - e.resolvedAt)} after resolved` : '';
        return ` at +${secs(m.at - e.at)}${after}${m.reason ? `, ${m.reason}` : ''}`;
      };
      violations.push({
        invariant: 'b',
        text: `e${n} raised ${sorted.length} times (${sorted.map((m) => m.replica + (m.redelivered ? '*' : m.lost ? '~' : '') + when(m)).join('; ')}), ${unmarked.length} of them unmarked`,
      });
    }
  }

  // (c)
  for (const e of o.injected) {
    const at = accepted.get(e.n);
    if (at === undefined) continue;
    checks.c++;
    const later = (answers.get(e.n) ?? []).filter((w) => w.time > at);
    if (later.length > 0)
      violations.push({
        invariant: 'c',
        text: `e${e.n} (i${e.instrument} ${e.source}) answered again ${later.length} time(s) after the instrument accepted an answer (statuses ${later.map((w) => w.status).join(', ')})`,
      });
  }

  // (d)
  const instruments = [...new Set(o.leases.map((s) => s.instrument))];
  for (const i of instruments) {
    const samples = o.leases.filter((s) => s.instrument === i).sort((x, y) => x.at - y.at);
    let since: number | undefined;
    let reported = false;
    for (const s of samples) {
      const live = o.spans.filter((sp) => sp.instruments.includes(i) && sp.from <= s.at && s.at < sp.to).map((sp) => sp.pid);
      if (!s.read || live.length === 0) {
        since = undefined;
        continue;
      }
      checks.d++;
      if (s.holderPid !== undefined && live.includes(s.holderPid)) {
        since = undefined;
        reported = false;
        continue;
      }
      since ??= s.at;
      if (!reported && s.at - since >= twoLeases) {
        reported = true;
        violations.push({
          invariant: 'd',
          text: `i${i} not held by any of the live replicas that know it (${live.join(', ')}) for ${Math.round((s.at - since) / 100) / 10} s from ${new Date(since).toISOString()}`,
        });
      }
    }
  }

  // (e)
  let excusedWrites = 0;
  const intentKeys = new Map<string, number[]>();
  const keyOf = (x: { instrument: number; api: string; method: string; path: string; target?: string }): string =>
    `${x.instrument} ${x.api} ${x.method} ${apiPath(x.path)} ${x.target ?? ''}`;
  for (const it of o.intents) intentKeys.set(keyOf(it), [...(intentKeys.get(keyOf(it)) ?? []), it.at]);
  for (const w of o.writes) {
    if (isSessionRequest(w)) continue;
    checks.e++;
    const found = (intentKeys.get(keyOf(w)) ?? []).some((at) => at <= w.time);
    if (found) continue;
    if (o.losses.some((l) => w.time >= l.readAt && w.time <= l.lostAt)) {
      excusedWrites++;
      continue;
    }
    violations.push({
      invariant: 'e',
      text: `i${w.instrument} received ${w.api} ${w.method} ${w.path}${w.target ? ` (${w.target})` : ''} at ${new Date(w.time).toISOString()} (status ${w.status}) with no intent record seen in its chain`,
    });
  }
  for (const c of o.chains) {
    checks.e++;
    if (!c.ok)
      violations.push({
        invariant: 'e',
        text: `i${c.instrument}'s chain does not verify (${new Date(c.at).toISOString()}): ${c.reason}`,
      });
    else if ((c.gaps ?? 0) > 0 && !o.losses.some((l) => l.lostAt <= c.at))
      violations.push({
        invariant: 'e',
        text: `i${c.instrument}'s chain declares records missing (${new Date(c.at).toISOString()}) although Redis lost nothing before`,
      });
  }
  return { violations, checks, excusedWrites };
}
