/**
 * What a chaos run does, drawn from a seed (pure: no I/O, no clock). Two tracks of faults that never overlap within a
 * track: the process track (Node-RED replicas and Redis) and the instrument track (the simulators' faults); and the
 * instrument's behaviour: errors appearing and leaving, ids reused, errors answered by a policy, by a flow or by a
 * person at the instrument. The same seed and options draw the same schedule everywhere.
 */
import { Rng } from '../support/prng';

export const FAULT_KINDS = [
  'kill-restart',
  'pause-past-lease',
  'redis-restart-persist',
  'redis-restart-empty',
  'redis-restart-stale',
  'flushall',
  'redis-down-at-start',
  'other-instruments',
  'redeploy',
  'slow-instrument',
  'resetting-instrument',
  'answers-refused',
  'two-errors-one-id',
  'redis-refuses-auth-at-start',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults of the simulators (the instrument track); the others act on replicas or Redis (the process track). */
export const INSTRUMENT_FAULTS: readonly FaultKind[] = ['slow-instrument', 'resetting-instrument', 'answers-refused'];

/** Kinds of instrument behaviour (drawn with the errors, never on a track). */
export const BEHAVIOUR_KINDS: readonly FaultKind[] = ['two-errors-one-id'];

export interface Fault {
  /** its number in the drawn schedule (kept by shrinking, so a shrunk schedule names the faults it kept) */
  n: number;
  kind: FaultKind;
  /** ms from the start of the run */
  at: number;
  /**
   * kill-restart: downtime before the restart; pause-past-lease: how long it is stopped; redis-restart-*: downtime;
   * redis-restart-stale: time between the snapshot and the crash; redis-down-at-start: how long Redis stays down
   * (a replica starts meanwhile); redis-refuses-auth-at-start: how long Redis refuses the restarted replica's
   * connection (NOAUTH); other-instruments: how long the replica lists fewer instruments; instrument
   * faults: how long they last; flushall, redeploy: 0
   */
  durationMs: number;
  /** the replica acted on (an index), or the lease holder of `instrument` at that moment */
  replica: number | 'holder';
  instrument: number;
}

export type Handling = 'walk' | 'semi' | 'flow' | 'manual';

export interface ErrorEvent {
  /** its number: the error's title carries it (`[walk e12]`), so every msg names the error it is about */
  n: number;
  at: number;
  instrument: number;
  source: 'A' | 'B';
  /** how long it stays listed unless answered before: then a person answers it at the instrument */
  lifeMs: number;
  /** walk: a walk-away rule answers at once; semi: after a delay; flow: an lh-answer-error node; manual: nobody */
  handling: Handling;
  /** A only: the id of this earlier error (which left the list before) is used again */
  reuses?: number;
  /** A only (kind two-errors-one-id): listed under the id of this earlier error, which is still pending */
  twin?: number;
}

export interface InstrumentShape {
  /** whether it serves interface B too (the poll watches both) */
  b: boolean;
}

export interface Schedule {
  version: 1;
  seed: number;
  durationMs: number;
  replicas: number;
  leaseSeconds: number;
  pollSeconds: number;
  instruments: InstrumentShape[];
  faults: Fault[];
  errors: ErrorEvent[];
}

export interface DrawOptions {
  durationMs: number;
  /** 2 or 3 */
  replicas: number;
  /** the fault kinds that may be drawn (default all) */
  kinds?: readonly FaultKind[];
  leaseSeconds?: number;
  pollSeconds?: number;
}

/** How long after a fault the process track waits before the next one: time to recover (two leases) and then some. */
function recovery(rng: Rng, leaseMs: number): number {
  return 2 * leaseMs + rng.int(2000, 8000);
}

function durationOf(kind: FaultKind, rng: Rng, leaseMs: number): number {
  switch (kind) {
    case 'kill-restart':
      return rng.int(200, 4000);
    case 'pause-past-lease':
      return Math.round(leaseMs * (1.2 + rng.next() * 1.3));
    case 'redis-restart-persist':
    case 'redis-restart-empty':
      return rng.int(200, 3000);
    case 'redis-restart-stale':
      return rng.int(1000, 5000);
    case 'redis-down-at-start':
    case 'redis-refuses-auth-at-start':
      return rng.int(3000, 8000);
    case 'other-instruments':
      return rng.int(10_000, 25_000);
    case 'flushall':
    case 'redeploy':
      return 0;
    case 'slow-instrument':
    case 'resetting-instrument':
    case 'answers-refused':
      return rng.int(3000, 12_000);
    case 'two-errors-one-id':
      return 0;
  }
}

/** The schedule of one seed. Each track and the errors draw from their own stream, so removing kinds keeps the others. */
export function drawSchedule(seed: number, options: DrawOptions): Schedule {
  const leaseSeconds = options.leaseSeconds ?? 3;
  const pollSeconds = options.pollSeconds ?? 1;
  const leaseMs = leaseSeconds * 1000;
  const kinds = options.kinds ?? FAULT_KINDS;
  const instruments: InstrumentShape[] = [{ b: true }, { b: false }];
  const { durationMs, replicas } = options;
  const faults: Fault[] = [];
  let n = 0;

  const processKinds = kinds.filter((k) => !INSTRUMENT_FAULTS.includes(k) && !BEHAVIOUR_KINDS.includes(k));
  const processRng = new Rng(seed ^ 0x9e3779b9);
  for (let t = processRng.int(4000, 8000); processKinds.length > 0 && t < durationMs - 5000;) {
    const kind = processRng.pick(processKinds);
    const durationMs = durationOf(kind, processRng, leaseMs);
    const onHolder = kind === 'kill-restart' || kind === 'pause-past-lease' ? processRng.chance(0.7) : false;
    const replica = onHolder ? ('holder' as const) : processRng.int(0, replicas - 1);
    faults.push({ n: 0, kind, at: t, durationMs, replica, instrument: processRng.int(0, instruments.length - 1) });
    t += durationMs + recovery(processRng, leaseMs);
  }

  const instrumentKinds = kinds.filter((k) => INSTRUMENT_FAULTS.includes(k));
  const instrumentRng = new Rng(seed ^ 0x85ebca6b);
  for (let t = instrumentRng.int(3000, 10_000); instrumentKinds.length > 0 && t < durationMs - 3000;) {
    const kind = instrumentRng.pick(instrumentKinds);
    const durationMs = durationOf(kind, instrumentRng, leaseMs);
    faults.push({ n: 0, kind, at: t, durationMs, replica: 0, instrument: instrumentRng.int(0, instruments.length - 1) });
    t += durationMs + instrumentRng.int(3000, 15_000);
  }
  faults.sort((a, b) => a.at - b.at);
  for (const f of faults) f.n = ++n;

  const errors: ErrorEvent[] = [];
  const errorRng = new Rng(seed ^ 0xc2b2ae35);
  // its own stream, one number per A error whether the kind is drawn or not: the other errors stay as they are
  const twinRng = new Rng(seed ^ 0x27d4eb2f);
  const twins = kinds.includes('two-errors-one-id');
  for (let t = errorRng.int(1000, 2000), e = 1; t < durationMs; t += errorRng.int(800, 3000), e++) {
    const instrument = errorRng.int(0, instruments.length - 1);
    const source = instruments[instrument].b && errorRng.chance(0.4) ? 'B' : 'A';
    // manual errors stay until a person answers at the instrument: they are what (a) checks most
    const handling: Handling = errorRng.pick(
      source === 'A' ? ['walk', 'semi', 'flow', 'manual', 'manual'] : ['walk', 'semi', 'manual', 'manual'],
    );
    // a third come and go quickly (no promise to see them); the rest stay listed past any failover
    const lifeMs = errorRng.chance(0.3) ? errorRng.int(1500, 6000) : errorRng.int(14_000, 30_000);
    const event: ErrorEvent = { n: e, at: t, instrument, source, lifeMs, handling };
    if (source === 'A' && errorRng.chance(0.2)) {
      const gone = errors.filter((x) => x.source === 'A' && x.instrument === instrument && x.at + x.lifeMs + 1000 < t);
      if (gone.length > 0) event.reuses = errorRng.pick(gone).n;
    }
    if (source === 'A' && twinRng.next() < 0.15 && twins && event.reuses === undefined) {
      const pending = errors.filter(
        (x) => x.source === 'A' && x.instrument === instrument && x.twin === undefined && x.at < t && t < x.at + x.lifeMs - 3000,
      );
      if (pending.length > 0) event.twin = twinRng.pick(pending).n;
    }
    errors.push(event);
  }
  return { version: 1, seed, durationMs, replicas, leaseSeconds, pollSeconds, instruments, faults, errors };
}

/** When a fault is over (the process track's next fault starts after this and a recovery time). */
export function faultEnd(f: Fault): number {
  return f.at + f.durationMs;
}

/**
 * The schedule with only these faults (shrinking): it ends 20 s after the last fault is over (or at the original end,
 * whichever comes first), and keeps the errors that start before that.
 */
export function withFaults(schedule: Schedule, faults: readonly Fault[]): Schedule {
  const lastEnd = faults.reduce((m, f) => Math.max(m, faultEnd(f)), 0);
  const durationMs = Math.min(schedule.durationMs, Math.max(lastEnd + 20_000, 15_000));
  return {
    ...schedule,
    durationMs,
    faults: [...faults],
    errors: schedule.errors.filter((e) => e.at < durationMs),
  };
}

/** The fault and behaviour kinds a schedule uses. */
export function kindsOf(schedule: Schedule): FaultKind[] {
  const kinds = new Set(schedule.faults.map((f) => f.kind));
  if (schedule.errors.some((e) => e.twin !== undefined)) kinds.add('two-errors-one-id');
  return [...kinds];
}

/** One line per fault, for the log and the regression file. */
export function describeFault(f: Fault): string {
  const who = f.replica === 'holder' ? `the holder of i${f.instrument}` : `r${f.replica + 1}`;
  const at = `${(f.at / 1000).toFixed(1)} s`;
  switch (f.kind) {
    case 'kill-restart':
      return `#${f.n} ${at}: SIGKILL ${who}, restart after ${f.durationMs} ms`;
    case 'pause-past-lease':
      return `#${f.n} ${at}: SIGSTOP ${who} for ${f.durationMs} ms, then SIGCONT`;
    case 'redis-restart-persist':
      return `#${f.n} ${at}: Redis SAVE, crash, back after ${f.durationMs} ms with its data`;
    case 'redis-restart-empty':
      return `#${f.n} ${at}: Redis crash without persistence, back empty after ${f.durationMs} ms`;
    case 'redis-restart-stale':
      return `#${f.n} ${at}: Redis SAVE, crash ${f.durationMs} ms later, back with the stale snapshot`;
    case 'flushall':
      return `#${f.n} ${at}: FLUSHALL`;
    case 'redis-down-at-start':
      return `#${f.n} ${at}: Redis down for ${f.durationMs} ms, r${Number(f.replica) + 1} restarted meanwhile`;
    case 'redis-refuses-auth-at-start':
      return `#${f.n} ${at}: r${Number(f.replica) + 1} restarted while Redis refuses new connections (NOAUTH) for ${f.durationMs} ms`;
    case 'other-instruments':
      return `#${f.n} ${at}: r${Number(f.replica) + 1} redeployed listing only i${1 - f.instrument} for ${f.durationMs} ms`;
    case 'redeploy':
      return `#${f.n} ${at}: full redeploy of r${Number(f.replica) + 1}`;
    case 'slow-instrument':
      return `#${f.n} ${at}: i${f.instrument} answers 1.5 s late for ${f.durationMs} ms`;
    case 'resetting-instrument':
      return `#${f.n} ${at}: i${f.instrument} resets 30 % of connections for ${f.durationMs} ms`;
    case 'answers-refused':
      return `#${f.n} ${at}: i${f.instrument} refuses every A answer (PUT answered 400) for ${f.durationMs} ms`;
    case 'two-errors-one-id':
      return `#${f.n} ${at}: two errors under one id`;
  }
}
