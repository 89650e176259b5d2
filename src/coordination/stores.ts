/**
 * The state that must hold exactly once across replicas, per instrument, in Redis. Writes made on the holder's
 * behalf (raised / resolved, automatic answers, due defaults) are fenced by its lease; what a person does (an answer
 * page POSTed to any replica) is claimed without the lease, the claim itself deciding who was first.
 */
import { createHash } from 'crypto';

import type { AnswerRecord } from '../client';
import { MAX_ANSWERS_KEPT } from '../client/answer-ledger';
import { LOGIN_TIMEOUT_MS } from '../client/session';
import { type InstrumentKeys } from './keys';
import { fenced, type RedisLike } from './leases';
import {
  CANCEL,
  FENCED_LEDGER_CLAIM,
  FENCED_SCHEDULE,
  FENCED_SEEN_RAISE,
  FENCED_SEEN_RESOLVE,
  FENCED_SWAP,
  FENCED_TAKE_DUE,
  FENCED_TAKE_ONE,
  FORM_TOKEN_USE,
  FORMS_FULL,
  GIVE_BACK,
  LEDGER_CLAIM,
  LEDGER_SETTLE,
  LEDGER_WRITE_BACK,
  LIVE,
  SEEN_CATCH_UP,
  SEEN_SETTLE,
  USERS,
} from './scripts';

/** Redis plus the commands the stores read with. */
export interface StoreRedis extends RedisLike {
  hgetall(key: string): Promise<Record<string, string>>;
  hget(key: string, field: string): Promise<string | null>;
  set(key: string, value: string, mode: 'NX'): Promise<string | null>;
  set(key: string, value: string, ex: 'EX', seconds: number): Promise<string | null>;
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<string | null>;
  del(key: string): Promise<number>;
}

/** An open error as the replicas remember it: what was raised, so a new holder can say it resolved. */
export interface SeenEntry {
  source: string;
  key: string;
  identity: string;
  record: unknown;
  /**
   * The fencing token of the holder that recorded this msg and has not yet settled it (two-phase: claimed, then
   * settled once the msg went out): a new holder sends an unsettled claim of an earlier holder again, marked.
   */
  claim?: number;
  /** a resolution whose *raised* msg was not settled either when it was claimed: a new holder sends both again */
  unsettledRaise?: boolean;
}

/** A seen entry as stored, with the raw value a compare-and-set names. */
export interface StoredEntry {
  field: string;
  raw: string;
  entry: SeenEntry;
}

/** The instrument's write sequence as a replica knows it, and what its own writes tell of it. */
export interface SeqWatch {
  known(): number;
  wrote(seq: number, before: number): void;
}

/** Seen errors of one watch (an lh-error-poll node, identical on every replica), shared by the replicas. */
export class SharedSeen {
  constructor(
    private readonly redis: StoreRedis,
    private readonly keys: InstrumentKeys,
    private readonly watch: string,
    /**
     * the instrument's write sequence as this replica knows it (`known`), and told it after each write made here with
     * what was known when the write was sent (see InstrumentCoordination.wroteSeq)
     */
    private readonly seqs: SeqWatch = { known: () => 0, wrote: () => undefined },
  ) {}

  private get hash(): string {
    return this.keys.shared(`seen:${this.watch}`);
  }

  /**
   * A script's reply: the write sequence after its write (told to `seqs` with `before`, the sequence known when the
   * write was sent), or 0 when it wrote nothing.
   */
  private wrote(before: number, reply: unknown): boolean {
    const seq = Number(reply);
    if (seq > 0) this.seqs.wrote(seq, before);
    return seq > 0;
  }

  /** Resolutions claimed and not yet settled (field: `<source>:<key>\n<identity>`). */
  private get resolvingHash(): string {
    return this.keys.shared(`seen:${this.watch}:resolving`);
  }

  /** The stored value of an entry: its identity first (what the scripts compare), then the entry (with its claim). */
  static bodyOf(entry: SeenEntry, claim?: number): string {
    const { source, key, identity, record } = entry;
    const raise = entry.unsettledRaise ? { unsettledRaise: true } : {};
    const body =
      claim === undefined ? { source, key, identity, record, ...raise } : { source, key, identity, record, claim, ...raise };
    return `${identity}\n${JSON.stringify(body)}`;
  }

  /**
   * The field of one error in the seen hash: its source, key and identity (an instrument may list several errors
   * under one id: each is raised once while listed and resolved once when it leaves, as on one Node-RED).
   */
  static fieldOf(entry: Pick<SeenEntry, 'source' | 'key' | 'identity'>): string {
    return `${entry.source}:${entry.key}\n${entry.identity}`;
  }

  /** The field versions before 0.4.1 kept an error under (one per key): still read, and moved on a takeover. */
  static legacyFieldOf(entry: Pick<SeenEntry, 'source' | 'key'>): string {
    return `${entry.source}:${entry.key}`;
  }

  static resolvingFieldOf(entry: Pick<SeenEntry, 'source' | 'key' | 'identity'>): string {
    return SharedSeen.fieldOf(entry);
  }

  /**
   * True when no replica raised this error (this identity under this key) before: the caller emits *raised*. With
   * `claim` (the holder's fencing token) the entry is claimed until `settleRaise` (it went out).
   */
  async raise(leaseValue: string, entry: SeenEntry, claim?: number): Promise<boolean> {
    const field = SharedSeen.fieldOf(entry);
    const prefix = `${entry.identity}\n`;
    const body = SharedSeen.bodyOf(entry, claim);
    return fenced('raised', async () =>
      this.wrote(
        this.seqs.known(),
        await this.redis.eval(
          FENCED_SEEN_RAISE,
          3,
          this.keys.lease,
          this.hash,
          this.keys.seq,
          leaseValue,
          field,
          body,
          prefix,
          SharedSeen.legacyFieldOf(entry),
        ),
      ),
    );
  }

  /** The *raised* msg of a claim went out: the entry is settled (unless another holder took the claim over). */
  async settleRaise(entry: SeenEntry, claim: number): Promise<boolean> {
    const args = [SharedSeen.fieldOf(entry), SharedSeen.bodyOf(entry, claim), SharedSeen.bodyOf(entry)];
    return Number(await this.redis.eval(SEEN_SETTLE, 1, this.hash, ...args)) === 1;
  }

  /**
   * True when this call is the one that saw the error resolved: the caller emits *resolved*. With `claim` the
   * resolution is kept, claimed, until `settleResolve` (its msg went out).
   */
  async resolve(
    leaseValue: string,
    entry: SeenEntry | Pick<SeenEntry, 'source' | 'key' | 'identity'>,
    claim?: number,
  ): Promise<boolean> {
    const field = SharedSeen.fieldOf(entry);
    const full: SeenEntry = { record: undefined, ...entry };
    const rfield = claim === undefined ? '' : SharedSeen.resolvingFieldOf(entry);
    const rbody = claim === undefined ? '' : SharedSeen.bodyOf(full, claim);
    return fenced('resolved', async () =>
      this.wrote(
        this.seqs.known(),
        await this.redis.eval(
          FENCED_SEEN_RESOLVE,
          4,
          this.keys.lease,
          this.hash,
          this.resolvingHash,
          this.keys.seq,
          leaseValue,
          field,
          `${entry.identity}\n`,
          rfield,
          rbody,
          SharedSeen.legacyFieldOf(entry),
        ),
      ),
    );
  }

  /** The *resolved* msg of a claimed resolution went out: it is forgotten (unless another holder took it over). */
  async settleResolve(entry: SeenEntry, claim: number): Promise<boolean> {
    const args = [SharedSeen.resolvingFieldOf(entry), SharedSeen.bodyOf(entry, claim), ''];
    return Number(await this.redis.eval(SEEN_SETTLE, 1, this.resolvingHash, ...args)) === 1;
  }

  /**
   * A new holder takes over a claim an earlier holder left unsettled (`list`: a raised entry or a resolution), under
   * its own fencing token `claim`: true when taken (send it again, marked), false when it changed meanwhile.
   */
  async takeOver(leaseValue: string, list: 'raised' | 'resolved', stored: StoredEntry, claim: number): Promise<boolean> {
    const hash = list === 'raised' ? this.hash : this.resolvingHash;
    const next = SharedSeen.bodyOf(stored.entry, claim);
    // a raised entry written before 0.4.1 moves to its field of one error (a resolution's field is unchanged)
    const field = list === 'raised' ? SharedSeen.fieldOf(stored.entry) : '';
    return fenced(list, async () =>
      this.wrote(
        this.seqs.known(),
        await this.redis.eval(
          FENCED_SWAP,
          3,
          this.keys.lease,
          hash,
          this.keys.seq,
          leaseValue,
          stored.field,
          stored.raw,
          next,
          field,
        ),
      ),
    );
  }

  /** Writes what this replica notified while Redis was unreachable (not fenced: those msgs went out already). */
  async catchUp(op: 'raise' | 'resolve', entry: SeenEntry): Promise<void> {
    const field = SharedSeen.fieldOf(entry);
    const prefix = `${entry.identity}\n`;
    const legacy = SharedSeen.legacyFieldOf(entry);
    this.wrote(
      this.seqs.known(),
      await this.redis.eval(SEEN_CATCH_UP, 2, this.hash, this.keys.seq, field, SharedSeen.bodyOf(entry), prefix, op, legacy),
    );
  }

  /** Every error raised and not yet resolved, by any replica. */
  async open(): Promise<SeenEntry[]> {
    return (await this.stored('raised')).map((s) => s.entry);
  }

  /** The raised entries (`raised`) or the claimed resolutions (`resolved`), as stored. */
  async stored(list: 'raised' | 'resolved'): Promise<StoredEntry[]> {
    const all = await this.redis.hgetall(list === 'raised' ? this.hash : this.resolvingHash);
    const out: StoredEntry[] = [];
    for (const [field, raw] of Object.entries(all)) {
      const nl = raw.indexOf('\n');
      try {
        out.push({ field, raw, entry: JSON.parse(raw.slice(nl + 1)) as SeenEntry });
      } catch {
        // an entry this version cannot read: left alone
      }
    }
    return out;
  }
}

/** An answer claimed in the shared ledger: an answer record (as one Node-RED keeps it) and the replica that claimed it. */
export interface ClaimedAnswer extends Pick<AnswerRecord, 'errorKey' | 'response' | 'by' | 'at' | 'outcome' | 'identity'> {
  replica: string;
}

export type LedgerClaim =
  { ok: true; confirm(): Promise<void>; release(): Promise<void> } | { ok: false; existing: ClaimedAnswer };

/**
 * The answer ledger of one instrument's source, shared: claim-before-send (the first claim wins across replicas),
 * confirmed when the instrument applied the answer, released when it refused it. An automatic answer (policy,
 * default) names the lease and is refused once another replica took over; a person's answer needs no lease.
 */
export class SharedLedger {
  constructor(
    private readonly redis: StoreRedis,
    private readonly keys: InstrumentKeys,
    private readonly source: string,
    private readonly replica: string,
    private readonly now: () => number = Date.now,
    /** entries kept at most (as one Node-RED's ledger); past it the oldest answered go first, never a live claim */
    private readonly bound: { maxKept: number; staleClaimMs: number } = {
      maxKept: MAX_ANSWERS_KEPT,
      staleClaimMs: STALE_LEDGER_CLAIM_MS,
    },
    /**
     * This replica's own claims (error key → the entry as claimed, then as confirmed), kept beside Redis so that
     * they can be written back when Redis loses its data (see reseed); bounded by MAX_OWN_CLAIMS, oldest first.
     */
    private readonly mine: Map<string, string> = new Map(),
  ) {}

  private keepMine(errorKey: string, json: string | undefined): void {
    this.mine.delete(errorKey);
    if (json === undefined) return;
    this.mine.set(errorKey, json);
    if (this.mine.size > MAX_OWN_CLAIMS) this.mine.delete(this.mine.keys().next().value as string);
  }

  /**
   * Redis lost its data: writes this replica's own claims back (where no newer entry is there now), so an answer it has in
   * flight, or gave, still blocks another replica's answer to that error. Returns how many went back.
   */
  async reseed(): Promise<number> {
    // all sent at once (one round trip, not one per claim: the round renews no lease until it is done), each entry
    // as this replica knows it when it is sent: an answer settled before (released, confirmed) changed it, and its
    // settle found nothing to change in Redis; one settled after is sent after it on the connection
    // (of two replicas' entries under one id, the newest is kept: see LEDGER_WRITE_BACK)
    const sent: Promise<unknown>[] = [];
    for (const [errorKey, json] of this.mine) {
      const at = (JSON.parse(json) as ClaimedAnswer).at;
      sent.push(this.redis.eval(LEDGER_WRITE_BACK, 2, this.hash, this.order, errorKey, json, at));
    }
    return (await Promise.all(sent)).filter((reply) => Number(reply) === 1).length;
  }

  private get hash(): string {
    return this.keys.ledger(this.source);
  }

  /** The claim time of each entry (Redis's clock): the order in which the bound drops them. */
  private get order(): string {
    return `${this.keys.ledger(this.source)}:order`;
  }

  /** Replaces the entry `expected` by `next` ('' deletes it), then bounds the ledger (atomic). */
  private settle(errorKey: string, expected: string, next: string): Promise<unknown> {
    const { maxKept, staleClaimMs } = this.bound;
    return this.redis.eval(LEDGER_SETTLE, 2, this.hash, this.order, errorKey, expected, next, maxKept, staleClaimMs);
  }

  async lookup(errorKey: string): Promise<ClaimedAnswer | undefined> {
    const raw = await this.redis.hget(this.hash, errorKey);
    return raw === null ? undefined : (JSON.parse(raw) as ClaimedAnswer);
  }

  /** `leaseValue` for automatic answers (fenced), undefined for a person's. */
  async claim(
    errorKey: string,
    response: string,
    options: {
      by?: string;
      identity?: string;
      leaseValue?: string;
      /** whether `existing` is over (`ageMs`: since it was claimed, by Redis's clock; undefined when not known) */
      supersedes?: (existing: ClaimedAnswer, ageMs: number | undefined) => boolean;
    } = {},
  ): Promise<LedgerClaim> {
    const record: ClaimedAnswer = { errorKey, response, at: this.now(), outcome: 'in-flight', replica: this.replica };
    if (options.by) record.by = options.by;
    if (options.identity) record.identity = options.identity;
    const json = JSON.stringify(record);
    const lease = options.leaseValue;
    const existing =
      lease === undefined
        ? await this.redis.eval(LEDGER_CLAIM, 2, this.hash, this.order, errorKey, json)
        : await fenced('automatic answer', () =>
            this.redis.eval(FENCED_LEDGER_CLAIM, 3, this.keys.lease, this.hash, this.order, lease, errorKey, json),
          );
    if (Array.isArray(existing)) {
      const [raw, age] = existing as [string, string];
      const found = JSON.parse(raw) as ClaimedAnswer;
      const ageMs = age === '' ? undefined : Number(age);
      // an answer to another error that had this id (an instrument reusing ids): that error is over, this claim wins
      const replaced = options.supersedes?.(found, ageMs) === true && Number(await this.settle(errorKey, raw, json)) === 1;
      if (!replaced) return { ok: false, existing: found };
    }
    // not fenced: confirming or releasing after the lease moved on is still right (the answer was sent or refused)
    this.keepMine(errorKey, json);
    const settle = async (next: string): Promise<void> => {
      this.keepMine(errorKey, next === '' ? undefined : next);
      // the entry as claimed, or as this replica wrote it back after Redis lost its data (the same JSON)
      await this.settle(errorKey, json, next);
    };
    return {
      ok: true,
      confirm: () => settle(JSON.stringify({ ...record, outcome: 'answered', at: this.now() })),
      release: () => settle(''),
    };
  }
}

/** Own claims a replica keeps to write back after Redis lost its data (the newest; answers are rarely older). */
export const MAX_OWN_CLAIMS = 1000;

/** A claim in flight for longer than this was lost with its replica (requests time out far sooner). */
export const STALE_LEDGER_CLAIM_MS = 10 * 60_000;

/**
 * How long an answer claimed in the shared ledger may still be in flight when its lh-server's requests time out
 * after `requestTimeoutMs`: a login first (LOGIN_TIMEOUT_MS at most), then the answer, twice over for safety, and
 * never less than STALE_LEDGER_CLAIM_MS. Past it the claim was lost with its replica and gives way; before, a second
 * answer could reach the instrument while the first is still on its way (a slow instrument, a long timeout).
 */
export function staleClaimMsFor(requestTimeoutMs: number): number {
  const timeout = Number.isFinite(requestTimeoutMs) && requestTimeoutMs > 0 ? requestTimeoutMs : 0;
  return Math.max(STALE_LEDGER_CLAIM_MS, 2 * (LOGIN_TIMEOUT_MS + timeout));
}

/** A pending policy default, due at `dueAt` (ms since the epoch). */
export interface DueDefault {
  key: string;
  body: unknown;
}

/** Pending defaults of one instrument, shared: a new holder sends a default that fell due exactly once. */
export class SharedDefaults {
  private readonly dueAt: string;
  private readonly dueBody: string;

  /** `name`: whose defaults (a policy node's id, the same on every replica); '' for the instrument's one book */
  constructor(
    private readonly redis: StoreRedis,
    keys: InstrumentKeys,
    name = '',
  ) {
    this.keys = keys;
    this.dueAt = name === '' ? keys.dueAt : `${keys.dueAt}:${name}`;
    this.dueBody = name === '' ? keys.dueBody : `${keys.dueBody}:${name}`;
  }

  private readonly keys: InstrumentKeys;

  /** Takes one default (fenced): true once, for the one replica that sends it; false when taken or cancelled. */
  async take(leaseValue: string, key: string): Promise<boolean> {
    return fenced(
      'default',
      async () =>
        Number(await this.redis.eval(FENCED_TAKE_ONE, 3, this.keys.lease, this.dueAt, this.dueBody, leaseValue, key)) === 1,
    );
  }

  async schedule(leaseValue: string, key: string, dueAt: number, body: unknown): Promise<void> {
    await fenced('default', () =>
      this.redis.eval(
        FENCED_SCHEDULE,
        3,
        this.keys.lease,
        this.dueAt,
        this.dueBody,
        leaseValue,
        key,
        dueAt,
        JSON.stringify(body),
      ),
    );
  }

  /**
   * Takes (removes) the defaults due by `now`, but those of `leave` (the caller's own timers send them): each is
   * handed to exactly one caller, across replicas.
   */
  async takeDue(leaseValue: string, now: number, max = 100, leave: readonly string[] = []): Promise<DueDefault[]> {
    const flat = (await fenced('default', () =>
      this.redis.eval(FENCED_TAKE_DUE, 3, this.keys.lease, this.dueAt, this.dueBody, leaseValue, now, max, ...leave),
    )) as string[];
    const out: DueDefault[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ key: flat[i], body: JSON.parse(flat[i + 1]) as unknown });
    return out;
  }

  /** A default taken and not sent (fenced) goes back to the schedule, due at `dueAt`: the holder sends it. */
  async giveBack(key: string, dueAt: number, body: unknown): Promise<void> {
    await this.redis.eval(GIVE_BACK, 2, this.dueAt, this.dueBody, key, dueAt, JSON.stringify(body));
  }

  /** The error was answered or resolved: its default is not sent (by any replica). */
  async cancel(key: string): Promise<boolean> {
    return Number(await this.redis.eval(CANCEL, 2, this.dueAt, this.dueBody, key)) === 1;
  }
}

/** The answer page's once-only form tokens, shared by the replicas: a form posted to two replicas answers once. */
export class SharedOnce {
  constructor(
    private readonly redis: StoreRedis,
    private readonly keys: InstrumentKeys,
  ) {}

  /**
   * A one-time form token of page `page` for error `errorKey` used (its MAC, valid until `expiresAt`, ms): true the
   * first time on any replica. Bounded like one Node-RED's used-set: at most `maxPerError` live tokens per error and
   * `maxAll` per page; when full, further forms are refused (never a used token forgotten early).
   */
  async useForm(
    page: string,
    errorKey: string,
    mac: string,
    expiresAt: number,
    caps: { maxPerError: number; maxAll: number },
  ): Promise<boolean> {
    const error = createHash('sha256').update(errorKey).digest('hex').slice(0, 24);
    const perError = this.keys.shared(`forms:${page}:${error}`);
    const all = this.keys.shared(`forms:${page}`);
    return (
      Number(
        await this.redis.eval(FORM_TOKEN_USE, 2, perError, all, mac, Math.floor(expiresAt), caps.maxPerError, caps.maxAll),
      ) === 1
    );
  }

  /** Whether forms of page `page` for `errorKey` are refused because the used-set is full of live tokens (useForm). */
  async formsFull(page: string, errorKey: string, caps: { maxPerError: number; maxAll: number }): Promise<boolean> {
    const error = createHash('sha256').update(errorKey).digest('hex').slice(0, 24);
    const perError = this.keys.shared(`forms:${page}:${error}`);
    const all = this.keys.shared(`forms:${page}`);
    return Number(await this.redis.eval(FORMS_FULL, 2, perError, all, caps.maxPerError, caps.maxAll)) === 1;
  }
}

/** A secret every replica must share (the answer page's link key): the first replica's value wins. */
export async function sharedSecret(redis: StoreRedis, keys: InstrumentKeys, name: string, candidate: string): Promise<string> {
  const key = keys.shared(`secret:${name}`);
  await redis.set(key, candidate, 'NX');
  return (await redis.get(key)) ?? candidate;
}

/**
 * Who uses a shared registration (the B handler key): `add` on start, `remove` on close returns how many live
 * replicas still use it; the caller unregisters on the instrument only at 0.
 */
export async function registrationUsers(
  redis: StoreRedis,
  keys: InstrumentKeys,
  replicasKey: string,
  name: string,
  replica: string,
  op: 'add' | 'remove',
): Promise<number> {
  // two steps, each within one hash slot (Redis Cluster): who is alive (global), then the instrument's users
  const [readAt, ...live] = (await redis.eval(LIVE, 1, replicasKey)) as (string | number)[];
  return Number(await redis.eval(USERS, 1, keys.registration(name), replica, op, Number(readAt), ...live.map(String)));
}
