import { createHash, randomBytes } from 'crypto';
import os from 'os';

import { answeredAnother, fingerprint, type SharedAnswerClaims } from '../client';
import { MAX_ANSWERS_KEPT } from '../client/answer-ledger';
import { type ApplyLockOptions, ApplyLocks } from './apply-locks';
import { ErrorGate, type GateRules } from './error-gate';
import { fairShare, planLeases } from './fair-share';
import { instrumentIdentity } from './instrument-identity';
import { CoordinationKeys } from './keys';
import { FencedError, type LeaseGrant, Leases, leaseSafetyMs } from './leases';
import { CoordinatedDefaults } from './policy-defaults';
import { CoordinatedMemory, SharedValue } from './shared-memory';
import {
  registrationUsers,
  SharedDefaults,
  SharedLedger,
  SharedOnce,
  sharedSecret,
  SharedSeen,
  STALE_LEDGER_CLAIM_MS,
  staleClaimMsFor,
  type StoreRedis,
} from './stores';

/**
 * What this Node-RED is for one instrument: the `holder` (polls, listens, emits, answers automatically), on
 * `standby` while another replica holds it (`holder` names it), or `lost` when Redis cannot be reached (it cannot
 * prove who holds the lease: no automatic answer, notifications go on, marked). `joining` until the first round.
 */
export type Role = 'joining' | 'holder' | 'standby' | 'lost';

export interface RoleState {
  role: Role;
  /** the replica holding the lease, when known */
  holder?: string;
  /** the fencing token while this replica holds the lease */
  token?: number;
  /** why coordination is lost (a Redis error message, never the URL's password) */
  reason?: string;
}

type Listener = (state: RoleState) => void;

/** One instrument as this replica sees it. */
export class InstrumentCoordination {
  private current: RoleState = { role: 'joining' };
  private readonly listeners = new Set<Listener>();
  /** the lease value while held, and until when (this process's clock) it is certainly still ours */
  grant?: LeaseGrant;
  validUntil = 0;
  /** a claim in flight in the shared ledger older than this was lost with its replica (see staleClaimMsFor) */
  staleClaimMs = STALE_LEDGER_CLAIM_MS;
  /** the newest fencing token this replica has seen (its own, or the holder's while it stands by) */
  knownToken = 0;
  /**
   * the instrument's write sequence as this replica last knew it (read each round, and told by its own writes): Redis
   * showing a lower one lost writes (a restore from an older snapshot), even when the epoch and fence counter survived
   */
  knownSeq = 0;
  /**
   * the run id of the Redis server holding the instrument's keys as this replica last read it (with the write
   * sequence): in a Cluster another master than the epoch's, as a rule; another run id: that master restarted
   */
  server?: string;
  /**
   * Set when this replica took the lease and found the fence counter behind a token it had seen: Redis lost its data
   * (FLUSHALL, a restart without persistence or from an older snapshot). `token`: the grant; `seen`: the newest token
   * seen before it (this replica's own when it held the lease then). What goes out first under it is marked.
   */
  dataLost?: { token: number; seen: number };
  /** the live replicas that know this instrument (this one included), as of the last round */
  watchers: string[] = [];
  /** nobody held the lease at this replica's last round (a lease free two rounds running is taken beyond the share) */
  freeLastRound = false;
  /** two-phase emissions: what the gates settle once a round (`all`: everything, before the lease is given up) */
  private readonly settlers = new Set<(all: boolean) => Promise<void>>();
  /** the raised / resolved gates of this instrument's poll nodes, by watch (a redeploy keeps its unsettled claims) */
  readonly gates = new Map<string, unknown>();

  constructor(
    readonly instrumentKey: string,
    readonly replica: string,
    /** this replica's clock (tests set it) */
    readonly now: () => number,
  ) {}

  get state(): RoleState {
    return { ...this.current };
  }

  /** Whether this replica holds the lease now (and its local validity has not run out: a paused process). */
  get isHolder(): boolean {
    return this.current.role === 'holder' && this.grant !== undefined && this.now() < this.validUntil;
  }

  /** the fencing token of the last lease this replica found gone at a renewal (expired or taken, not given up) */
  lostToken?: number;

  /**
   * Whether Redis lost data since this replica's last round and no round has told it yet (the server of the
   * instrument's keys restarted, its write sequence went back, or a round found a loss and failed before it was
   * told): a sweep asks first, since what it finds missing may be what the loss took (set by the Coordinator).
   */
  untoldLoss: () => Promise<boolean> = () => Promise.resolve(false);

  /**
   * Whether this replica's lease under `token` ran out without it giving it up: by its own clock (a pause past the
   * lease: it may still be renewed, under the same token), or found gone at a renewal. A write Redis took under that
   * lease and answered only now (the answer waited while the process was paused) must not be acted on here.
   */
  lapsed(token: number): boolean {
    if (this.isHolder) return false;
    if (this.grant) return this.current.role === 'holder' && this.grant.token === token;
    return this.lostToken === token;
  }

  /** The lease value fenced writes must name; throws FencedError when this replica does not hold the lease. */
  leaseValue(what: string): string {
    if (!this.isHolder || !this.grant) throw new FencedError(what);
    return this.grant.value;
  }

  /** a write of this replica's got a sequence not above what it knew when it sent it: Redis lost writes */
  private seqWentBack = false;

  /** The write sequence as read (the newest one counts). */
  knowSeq(seq: number): void {
    if (seq > this.knownSeq) this.knownSeq = seq;
  }

  /**
   * The write sequence after a write this replica made, `before`: the sequence it knew when it sent the write. Redis
   * only counts up, so a sequence not above `before` means it lost writes since (a restore from an older snapshot),
   * even when more writes push it back above what was known before the next round reads it.
   */
  wroteSeq(seq: number, before: number): void {
    if (seq <= before) {
      this.seqWentBack = true;
      this.knownSeq = seq;
    } else this.knowSeq(seq);
  }

  /** Whether a write told a loss that no round has taken yet (takeSeqWentBack). */
  get seqWentBackUntold(): boolean {
    return this.seqWentBack;
  }

  /** Whether a write told a loss since the last call. */
  takeSeqWentBack(): boolean {
    const went = this.seqWentBack;
    this.seqWentBack = false;
    return went;
  }

  /** A fencing token seen in Redis (the tokens only grow: the newest one counts). */
  know(token: number): void {
    if (token > this.knownToken) this.knownToken = token;
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A gate's settle step, run once per round (`all` false) and before the lease is given up (`all` true). */
  addSettler(settle: (all: boolean) => Promise<void>): void {
    this.settlers.add(settle);
  }

  /** Settles the emissions of every gate of this instrument (a failure leaves them for the next round). */
  async settle(all: boolean): Promise<void> {
    for (const settle of [...this.settlers]) await settle(all).catch(() => undefined);
  }

  /** Sets the state, telling listeners when the role or the holder changed. */
  set(next: RoleState): void {
    const before = this.current;
    this.current = next;
    if (next.token !== undefined) this.know(next.token);
    if (before.role === next.role && before.holder === next.holder && before.token === next.token) return;
    for (const l of [...this.listeners]) l({ ...next });
  }
}

export interface CoordinatorOptions {
  redis: StoreRedis;
  prefix: string;
  leaseMs: number;
  /** this replica's name; default: host name, process id and a random part (a restart is a new replica) */
  replica?: string;
  now?: () => number;
}

/** An answer claimed and neither confirmed nor released for this long was lost with its replica (requests time out sooner). */
export const STALE_CLAIM_MS = STALE_LEDGER_CLAIM_MS;

/** The replica name: unique per process start, readable in a status ("lab-pc-2/4711-3fa9"). */
export function replicaName(): string {
  return `${os.hostname()}/${process.pid}-${randomBytes(2).toString('hex')}`;
}

/**
 * The leases of one coordination group in this process: every `round` (a third of the lease) it says the replica is
 * alive, renews the leases it holds, releases those beyond its fair share and takes free ones up to it. A lease lost
 * (expired while paused, or taken) turns that instrument to standby at once; a Redis error turns every instrument to
 * `lost` until a round succeeds again.
 */
export class Coordinator {
  readonly replica: string;
  readonly leases: Leases;
  readonly keys: CoordinationKeys;
  private readonly instruments = new Map<string, InstrumentCoordination>();
  private readonly users = new Map<string, number>();
  /** how many lh-server nodes joined under each spelling of an instrument's URLs */
  private readonly spellings = new Map<string, number>();
  private readonly now: () => number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private closed = false;
  /** when a round last reached Redis (start: when this replica started trying) */
  private lastOk: number;
  /** live replicas seen at the last round */
  live: string[] = [];
  /** the group's epoch as this replica last read it (a change: Redis lost its data) */
  private epoch?: string;
  /** the run id of the Redis server that holds the epoch, as this replica last read it (another: it restarted) */
  private server?: string;
  /**
   * rounds left in which a lease taken is a recovery after Redis lost its data: counted in rounds (timers), not on
   * this replica's clock, so a clock step neither shortens nor stretches it
   */
  private lossRoundsLeft = 0;
  /**
   * when this replica last learned that Redis lost its data, on a monotonic clock (performance.now): a step of the
   * replica's wall clock neither stretches the hold of automatic answers nor ends it early
   */
  private lossSeenAt?: number;
  /** own answer claims still to write back after a loss (a write-back a Redis error cut short is tried again) */
  private writeBackDue = false;
  /**
   * a loss a round found (the epoch or the server changed, a write sequence went back) and did not finish telling (a
   * Redis error cut it short): the epoch and run id it read are the known ones now, so the next round would not find
   * it again; it tells it instead. `rotate`: the group's epoch is still to be renewed (a write sequence went back).
   */
  private untold?: { rotate: boolean };
  /**
   * This replica's own answer claims, by instrument identity and source (error key → entry), written back when Redis
   * loses its data. Kept here, not with the instrument's coordination, so that a redeploy of the lh-server nodes (the
   * instrument left and joined again) keeps them; bounded per instrument and source (MAX_OWN_CLAIMS).
   */
  private readonly ownClaims = new Map<string, Map<string, Map<string, string>>>();
  /**
   * The registrations this replica counts itself among the users of (instrument key → names, see registrationUsers):
   * the count is written once, when a node starts using one; after Redis lost its data this replica counts itself
   * again, or the next replica to stop would take itself for the last user and unregister under this one.
   */
  private readonly registrations = new Map<string, Set<string>>();
  /** the registrations are still to be counted again after a loss (a Redis error cut it short) */
  private recountDue = false;

  constructor(private readonly options: CoordinatorOptions) {
    this.replica = options.replica ?? replicaName();
    this.keys = new CoordinationKeys(options.prefix);
    this.leases = new Leases(options.redis, this.keys);
    this.now = options.now ?? Date.now;
    this.lastOk = this.now();
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  get redis(): StoreRedis {
    return this.options.redis;
  }

  /** The pending defaults of one policy node (`name`: its id, the same on every replica) of an instrument. */
  defaults<P extends { key: string; deadline: number }>(instrumentKey: string, name: string): CoordinatedDefaults<P> {
    const inst = this.instrument(instrumentKey);
    if (!inst) throw new Error(`instrument ${instrumentKey} has not joined the coordination`);
    return new CoordinatedDefaults<P>(inst, new SharedDefaults(this.redis, this.keys.instrument(instrumentKey), name));
  }

  /** The raised / resolved gate of one poll node (`watch`: its id, the same on every replica) of an instrument. */
  errorGate<T>(instrumentKey: string, watch: string, rules: GateRules<T>): ErrorGate<T> {
    const inst = this.instrument(instrumentKey);
    if (!inst) throw new Error(`instrument ${instrumentKey} has not joined the coordination`);
    // one gate per watch while the instrument is joined: a redeployed poll node keeps the claims it has not settled
    const found = inst.gates.get(watch) as ErrorGate<T> | undefined;
    if (found) {
      found.adopt(rules);
      return found;
    }
    const gate = new ErrorGate(
      inst,
      new SharedSeen(this.redis, this.keys.instrument(instrumentKey), watch, {
        known: () => inst.knownSeq,
        wrote: (seq, before) => inst.wroteSeq(seq, before),
      }),
      rules,
    );
    inst.gates.set(watch, gate);
    return gate;
  }

  /** The instrument's coordination under any spelling of its URLs (see instrument-identity.ts). */
  private instrument(instrumentKey: string): InstrumentCoordination | undefined {
    return this.instruments.get(instrumentIdentity(instrumentKey));
  }

  /** The shared memory of one poll node (`name`: its id, the same on every replica) of an instrument (run watch). */
  memory<T>(instrumentKey: string, name: string, parse: (json: string) => T | undefined): CoordinatedMemory<T> {
    const inst = this.instrument(instrumentKey);
    if (!inst) throw new Error(`instrument ${instrumentKey} has not joined the coordination`);
    return new CoordinatedMemory<T>(inst, new SharedValue(this.redis, this.keys.instrument(instrumentKey), name), parse);
  }

  /** A secret every replica of the group shares for this instrument (the first replica's candidate wins). */
  secret(instrumentKey: string, name: string, candidate: string): Promise<string> {
    return sharedSecret(this.redis, this.keys.instrument(instrumentKey), name, candidate);
  }

  /** Once-only claims of this instrument (form tokens used, run starts), shared by the replicas. */
  once(instrumentKey: string): SharedOnce {
    return new SharedOnce(this.redis, this.keys.instrument(instrumentKey));
  }

  /** The answer ledger of this instrument's source ('A' or 'B'), shared: the first claim wins across replicas. */
  ledger(instrumentKey: string, source: string): SharedLedger {
    const inst = this.instrument(instrumentKey);
    const staleClaimMs = inst?.staleClaimMs ?? STALE_CLAIM_MS;
    const identity = instrumentIdentity(instrumentKey);
    let bySource = this.ownClaims.get(identity);
    if (!bySource) this.ownClaims.set(identity, (bySource = new Map()));
    let own = bySource.get(source);
    if (!own) bySource.set(source, (own = new Map()));
    return new SharedLedger(
      this.redis,
      this.keys.instrument(instrumentKey),
      source,
      this.replica,
      this.now,
      { maxKept: MAX_ANSWERS_KEPT, staleClaimMs },
      own,
    );
  }

  /**
   * Redis lost its data (this replica just learned it): its own answer claims go back into the shared ledgers, so an
   * answer it has in flight (or gave) still blocks another replica's automatic answer to that error.
   */
  private async reseedLedgers(): Promise<void> {
    this.lossSeenAt = performance.now();
    this.writeBackDue = true;
    this.recountDue = true;
    // a Redis error leaves it due: the next round tries again (and the round goes on with its leases meanwhile)
    await this.writeBack().catch(() => undefined);
    await this.recount().catch(() => undefined);
  }

  /**
   * Counts this replica again among the users of the registrations it uses (after a loss, or a count Redis refused);
   * due again on a failure.
   */
  private async recount(): Promise<void> {
    for (const [instrumentKey, names] of this.registrations)
      for (const name of [...names]) {
        // a node that stopped using it meanwhile (removed below before its own count) is not counted again
        if (!this.registrations.get(instrumentKey)?.has(name)) continue;
        const keys = this.keys.instrument(instrumentKey);
        await registrationUsers(this.redis, keys, this.keys.replicas, name, this.replica, 'add');
      }
    this.recountDue = false;
  }

  /** Writes the own claims back; a write-back cut short (a Redis error) is due again at the next round. */
  private async writeBack(): Promise<void> {
    for (const [identity, bySource] of this.ownClaims)
      for (const source of bySource.keys()) await this.ledger(identity, source).reseed();
    this.writeBackDue = false;
  }

  /**
   * After Redis lost its data, answers (automatic and a person's) wait until every live replica had a round to learn it
   * and write its own claims back (two rounds from when this one learned it): an answer another replica had in flight
   * before the loss then refuses this one, instead of both reaching the instrument.
   */
  private async recoveryHold(): Promise<void> {
    const hold = 2 * this.roundMs;
    const wait = this.lossSeenAt === undefined ? 0 : Math.min(hold, this.lossSeenAt + hold - performance.now());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /**
   * Says this replica uses (`add`) or no longer uses (`remove`) a registration on the instrument (`name`: the B
   * handler key); returns how many live replicas use it now: only the last one unregisters it on the instrument.
   */
  async registrationUsers(instrumentKey: string, name: string, op: 'add' | 'remove'): Promise<number> {
    // known here first: a count Redis refuses (unreachable, full) is written at its next round that Redis answers
    // (see recount), else the replica would stay uncounted and another replica that stops unregister under it
    const names = this.registrations.get(instrumentKey) ?? new Set<string>();
    if (op === 'add') this.registrations.set(instrumentKey, names.add(name));
    else {
      names.delete(name);
      if (names.size === 0) this.registrations.delete(instrumentKey);
    }
    try {
      // live before counting: a user without a heartbeat is taken for a dead replica by the next replica that counts
      if (op === 'add' && !this.closed) await this.leases.heartbeat(this.replica, this.options.leaseMs);
      return await registrationUsers(this.redis, this.keys.instrument(instrumentKey), this.keys.replicas, name, this.replica, op);
    } catch (err) {
      if (op === 'add') this.recountDue = true;
      throw err;
    }
  }

  /**
   * Every answer to the instrument, whoever gives it on this replica (a page, a policy, an answer node), is claimed
   * in the shared ledger first; an answer kept for another error under the same id (a reused id) gives way.
   */
  answerClaims(instrumentKey: string): SharedAnswerClaims {
    return {
      claim: async (source, errorKey, response, options) => {
        const identity = options.identity ? fingerprint(options.identity) : undefined;
        // an automatic answer (a policy's) is made on the holder's behalf: fenced by its lease, like its defaults
        await this.recoveryHold(); // a person's answer too: it would otherwise pass an answer in flight before the loss
        const inst = this.instrument(instrumentKey);
        const leaseValue = options.automatic ? (inst?.leaseValue('automatic answer') ?? '') : undefined;
        return this.ledger(instrumentKey, source).claim(errorKey, response, {
          ...(options.by ? { by: options.by } : {}),
          ...(identity ? { identity } : {}),
          ...(leaseValue !== undefined ? { leaseValue } : {}),
          // a claim left in flight by a replica that died mid-request gives way once no request can still be open
          // (its age by Redis's clock: a replica whose clock runs ahead must not take a live claim for a dead one)
          supersedes: (existing, ageMs) =>
            existing.outcome === 'answered'
              ? answeredAnother({ ...existing }, options.identity)
              : (ageMs ?? this.now() - existing.at) > (inst?.staleClaimMs ?? STALE_CLAIM_MS),
        });
      },
    };
  }

  /**
   * The locks applies of a plan (lh-protocol) hold on the instrument's protocols, shared by the replicas: keyed by
   * interface A's URL alone (protocols live there), so replicas that name interface B differently, or not at all,
   * still wait for each other.
   */
  applyLocks(instrumentKey: string, options: ApplyLockOptions = {}): ApplyLocks {
    const bar = instrumentKey.indexOf('|');
    const a = bar < 0 ? instrumentKey : instrumentKey.slice(0, bar);
    return new ApplyLocks(this.redis, this.keys.instrument(`${a}|`), this.replica, options);
  }

  /**
   * The instrument's coordination (one per instrument key, shared by every lh-server node of it). `requestTimeoutMs`:
   * the lh-server's request timeout (how long an answer may be in flight: the longest of its lh-server nodes counts).
   */
  join(instrumentKey: string, options: { requestTimeoutMs?: number } = {}): InstrumentCoordination {
    const identity = instrumentIdentity(instrumentKey);
    let found = this.instruments.get(identity);
    if (!found) {
      found = new InstrumentCoordination(identity, this.replica, this.now);
      const inst = found;
      found.untoldLoss = () => this.untoldLoss(inst);
      this.instruments.set(identity, found);
    }
    // (the lh-server node hands answerClaims() to its instrument's home, src/instrument)
    const spelled = this.spellings.get(instrumentKey) ?? 0;
    this.spellings.set(instrumentKey, spelled + 1);
    found.staleClaimMs = Math.max(found.staleClaimMs, staleClaimMsFor(options.requestTimeoutMs ?? 0));
    this.users.set(identity, (this.users.get(identity) ?? 0) + 1);
    this.schedule(0);
    return found;
  }

  /** One user of the instrument leaves; the last releases the lease (another replica takes over at once). */
  async leave(instrumentKey: string): Promise<void> {
    const identity = instrumentIdentity(instrumentKey);
    const spelled = (this.spellings.get(instrumentKey) ?? 1) - 1;
    if (spelled > 0) this.spellings.set(instrumentKey, spelled);
    else this.spellings.delete(instrumentKey);
    const left = (this.users.get(identity) ?? 1) - 1;
    if (left > 0) return void this.users.set(identity, left);
    this.users.delete(identity);
    const inst = this.instruments.get(identity);
    this.instruments.delete(identity);
    // a round in flight read the instruments before and may still take this one's lease: given back after it
    await this.running?.catch(() => undefined);
    // what the gates sent and have not settled is settled first: the next holder does not send it again
    if (inst?.grant) await inst.settle(true);
    if (inst?.grant) await this.leases.release(identity, inst.grant.value).catch(() => false);
  }

  /** The instruments this replica holds now. */
  held(): string[] {
    return [...this.instruments.values()].filter((i) => i.isHolder).map((i) => i.instrumentKey);
  }

  get roundMs(): number {
    return Math.max(50, Math.floor(this.options.leaseMs / 3));
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, delayMs);
  }

  /**
   * One round now (tests step them by hand; a join asks for one): never beside another round of this replica, which
   * it waits for (two at once would each read the other's writes half done), and the next one comes a round later.
   */
  async round(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    const run = this.step();
    this.running = run;
    try {
      await run;
    } finally {
      this.running = undefined;
      // a round asked for meanwhile (a join's, at once) is kept, not put off a round
      if (!this.timer) this.schedule(this.roundMs);
    }
  }

  private async step(): Promise<void> {
    const ttl = this.options.leaseMs;
    const started = this.now();
    try {
      const all = [...this.instruments.values()];
      // what the gates sent a round ago or more is settled (two-phase: a holder killed before leaves it to the next)
      for (const inst of all) await inst.settle(false);
      this.live = await this.leases.heartbeat(this.replica, ttl);
      // the group's epoch changed: Redis lost its data; the leases this replica takes for a while are flagged. The
      // server restarted: it may have come back from a snapshot older than the last writes, which no replica but
      // their writer can tell from the write sequences (every replica sees the restart: flagged alike, no new epoch)
      const seen = await this.readEpoch();
      if (seen.changed || seen.restarted) this.untold ??= { rotate: false };
      // an instrument's write sequence lower than this replica knew: Redis lost writes (restored from an older
      // snapshot, epoch and fence counter as they were): the group gets a new epoch, every replica tells the loss
      const writes = await this.writesLost(all);
      if (writes.wentBack) this.untold = { rotate: true };
      // the master holding an instrument's keys restarted (a Cluster: the epoch's master may have run on): alike
      if (writes.restarted) this.untold ??= { rotate: false };
      if (this.untold?.rotate) {
        if (!seen.changed) this.epoch = await this.leases.rotateEpoch(seen.epoch, randomBytes(8).toString('hex'));
        this.untold.rotate = false;
      }
      let lost = this.untold !== undefined;
      // two lease times of rounds, this one included
      if (lost) this.lossRoundsLeft = Math.ceil((2 * ttl) / this.roundMs) + 1;
      if (lost) await this.reseedLedgers();
      else if (this.writeBackDue) await this.writeBack();
      if (!lost && this.recountDue) await this.recount().catch(() => undefined); // due again: the next round
      let afterLoss = this.lossRoundsLeft > 0;
      if (this.lossRoundsLeft > 0) this.lossRoundsLeft--;
      // the share counts every instrument a live replica knows, not only this one's (replicas whose flows differ)
      const known = await this.leases.knows(
        this.replica,
        all.map((i) => i.instrumentKey),
        ttl,
      );
      all.forEach((inst, i) => (inst.watchers = known.watchers[i] ?? []));
      for (const inst of all) {
        if (!inst.grant) continue;
        if (await this.leases.renew(inst.instrumentKey, inst.grant.value, ttl)) {
          inst.validUntil = started + ttl - leaseSafetyMs(ttl);
          // its lease survived the loss (restored with it): it recovers under the lease it holds, writing back what
          // it knew open (a later holder finds it) and marking what goes out until each source was listed once
          if (lost) inst.dataLost = { token: inst.grant.token, seen: inst.grant.token };
          inst.set({ role: 'holder', holder: this.replica, token: inst.grant.token });
        } else {
          inst.lostToken = inst.grant.token;
          inst.grant = undefined;
          const lease = await this.leases.current(inst.instrumentKey);
          inst.know(lease.token);
          inst.set({ role: 'standby', holder: lease.holder });
        }
      }
      const held = all.filter((i) => i.grant).map((i) => i.instrumentKey);
      const others = all.filter((i) => !i.grant).map((i) => i.instrumentKey);
      const instruments = Math.max(known.count, all.length);
      const share = fairShare(instruments, this.live, this.replica);
      const holding = await this.leases.holding(this.replica, held.length, this.live);
      const othersKnow = (key: string): boolean =>
        (this.instruments.get(key)?.watchers ?? []).some((r) => r !== this.replica && this.live.includes(r));
      // a lease beyond the share is handed over only to a live replica that knows the instrument and is under its
      // own share (it takes it at its next round); else it stays: released, nobody might take it
      const handOver = (key: string): boolean =>
        (this.instruments.get(key)?.watchers ?? []).some(
          (r) => r !== this.replica && this.live.includes(r) && (holding.get(r) ?? 0) < fairShare(instruments, this.live, r),
        );
      const plan = planLeases(held, others, share, (key) => rendezvous(this.replica, key), handOver);
      for (const key of plan.release) {
        const inst = this.instruments.get(key);
        if (!inst?.grant) continue;
        await inst.settle(true);
        const value = inst.grant.value;
        inst.grant = undefined;
        inst.set({ role: 'standby', holder: undefined });
        await this.leases.release(key, value);
      }
      let count = held.length - plan.release.length;
      const byRank = [...others].sort((a, b) => rendezvous(this.replica, b) - rendezvous(this.replica, a));
      for (const key of byRank) {
        const inst = this.instruments.get(key);
        if (!inst) continue;
        let take = count < share && plan.acquire.includes(key);
        if (!take) {
          // beyond the share: a lease nobody holds is taken when no other live replica knows the instrument, or
          // when it stayed free since the last round (those that know it are at their share): never unwatched
          const lease = await this.leases.current(key);
          inst.know(lease.token);
          const free = lease.holder === undefined;
          take = free && (!othersKnow(key) || inst.freeLastRound);
          inst.freeLastRound = free;
          if (!take) {
            inst.set({ role: 'standby', holder: lease.holder });
            continue;
          }
        }
        const seen = inst.knownToken;
        const grant = await this.leases.acquire(key, this.replica, ttl, seen);
        if (grant.token > 0) {
          // Redis may have lost its data after this round read the epoch: a replica that never saw the lease's
          // token (it was free at its last look) cannot tell from the grant, the epoch tells (read again)
          if (!grant.dataLost && !afterLoss) afterLoss = await this.lossSinceRoundStart(inst);
          // told by the grant alone (a snapshot that kept the epoch and the write sequences, not the fence counter)
          const toldByGrant = grant.dataLost === true && !lost;
          if (toldByGrant) lost = afterLoss = true;
          count++;
          inst.freeLastRound = false;
          inst.grant = grant;
          if (grant.dataLost || afterLoss) inst.dataLost = { token: grant.token, seen };
          inst.validUntil = started + ttl - leaseSafetyMs(ttl);
          inst.set({ role: 'holder', holder: this.replica, token: grant.token });
          if (toldByGrant) {
            // the group gets a new epoch, so every replica learns it at its next round and writes its claims back
            // (after the grant is recorded: a Redis error here must not leave a lease taken and not known)
            this.lossRoundsLeft = Math.ceil((2 * ttl) / this.roundMs);
            await this.reseedLedgers();
            if (this.epoch !== undefined) this.epoch = await this.leases.rotateEpoch(this.epoch, randomBytes(8).toString('hex'));
          }
          continue;
        }
        if (grant.heldToken !== undefined) inst.know(grant.heldToken);
        inst.freeLastRound = false;
        inst.set({ role: 'standby', holder: grant.holder });
      }
      this.lastOk = started;
      this.untold = undefined;
    } catch (err) {
      // A blip shorter than a lease changes nothing: the holder stays holder until its lease would have run out
      // (its writes fail meanwhile and go out marked), the others stay on standby. Longer, nobody can prove who
      // watches: every replica is `lost` and notifies (a duplicate beats a miss), and none answers automatically.
      if (this.now() - this.lastOk < this.options.leaseMs) return;
      const reason = err instanceof Error ? err.message : String(err);
      for (const inst of this.instruments.values()) {
        inst.set({ role: 'lost', holder: inst.state.holder, reason });
        inst.validUntil = 0;
      }
    }
  }

  /**
   * Reads the group's epoch again (set anew by the first replica to find it gone): a change since this replica read
   * it at the start of its round means Redis lost its data meanwhile; the leases taken from now on are flagged.
   */
  private async lossSinceRoundStart(inst: InstrumentCoordination): Promise<boolean> {
    const seen = await this.readEpoch();
    // the instrument's own master (a Cluster's: not the epoch's, as a rule) restarted since the round read it
    const { server } = await this.leases.sequence(inst.instrumentKey);
    const changed = seen.changed || seen.restarted || this.restartedUnder(inst, server);
    // two lease times of rounds, this one counted already
    if (changed) this.lossRoundsLeft = Math.ceil((2 * this.options.leaseMs) / this.roundMs);
    if (changed) await this.reseedLedgers();
    return changed;
  }

  /**
   * Reads the group's epoch and the run id of its Redis server: `changed` the epoch is another than this replica read
   * last (Redis lost its data), `restarted` the server is another run (a restart or a failover: writes of its last
   * moments may be lost with a snapshot older than them). Neither on this replica's first read.
   */
  private async readEpoch(): Promise<{ epoch: string; changed: boolean; restarted: boolean }> {
    const { epoch, server } = await this.leases.epoch(randomBytes(8).toString('hex'));
    const changed = this.epoch !== undefined && epoch !== this.epoch;
    const restarted = this.server !== undefined && server !== '' && server !== this.server;
    this.epoch = epoch;
    if (server !== '') this.server = server;
    return { epoch, changed, restarted };
  }

  /**
   * Reads each instrument's write sequence: `wentBack` when one is lower than this replica knew (Redis lost writes), and
   * the run id of the server holding it: `restarted` when it is another than at the last read. The
   * value known before the read is compared (a write of this replica's answered meanwhile is not a loss); afterwards
   * Redis's value is the one known.
   */
  private async writesLost(all: readonly InstrumentCoordination[]): Promise<{ wentBack: boolean; restarted: boolean }> {
    let wentBack = false;
    let restarted = false;
    for (const inst of all) {
      const before = inst.knownSeq;
      const { seq, server } = await this.leases.sequence(inst.instrumentKey);
      if (this.restartedUnder(inst, server)) restarted = true;
      if (inst.takeSeqWentBack() || seq < before) {
        wentBack = true;
        inst.knownSeq = seq;
      } else inst.knowSeq(seq);
    }
    return { wentBack, restarted };
  }

  /**
   * Whether the server holding the instrument's keys is another run than this replica read last (never on its first
   * read, nor where INFO is refused: ''); the run id read is the one known from now on.
   */
  private restartedUnder(inst: InstrumentCoordination, server: string): boolean {
    if (server === '') return false;
    const restarted = inst.server !== undefined && server !== inst.server;
    inst.server = server;
    return restarted;
  }

  /**
   * Whether Redis lost data since this replica's last round, not told yet: a loss a failed round found, a write of its
   * own that told one, or the instrument's server or write sequence now another than that round read. Reads only:
   * the next round tells the loss to the group as ever.
   */
  private async untoldLoss(inst: InstrumentCoordination): Promise<boolean> {
    if (this.untold || inst.seqWentBackUntold) return true;
    const before = inst.knownSeq; // a write of its own answered meanwhile is not a loss
    const { seq, server } = await this.leases.sequence(inst.instrumentKey);
    return seq < before || (server !== '' && inst.server !== undefined && server !== inst.server);
  }

  /** Stops the rounds and releases every lease (another replica takes over at once), then leaves the group. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    this.spellings.clear();
    for (const inst of this.instruments.values()) {
      if (inst.grant) await inst.settle(true);
      if (inst.grant) await this.leases.release(inst.instrumentKey, inst.grant.value).catch(() => false);
      inst.grant = undefined;
    }
    await this.leases.heartbeat(this.replica, 0).catch(() => []);
    await this.leases.holding(this.replica, undefined, this.live).catch(() => undefined);
  }
}

/** Rendezvous weight of (replica, instrument): which free leases a replica tries first. */
export function rendezvous(replica: string, instrumentKey: string): number {
  return createHash('sha256').update(`${replica}\n${instrumentKey}`).digest().readUInt32BE(0);
}
