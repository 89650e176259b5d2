/**
 * Raised / resolved across replicas, exactly once: a poll node's local memory proposes what it saw raised and
 * resolved; the gate lets through only what the shared memory (Redis, fenced by the lease) says no replica emitted
 * yet, and adds the errors raised by an earlier holder that are no longer listed (resolved while nobody watched).
 * Without the lease nothing passes; with Redis lost everything passes, marked (a duplicate beats a miss).
 */
import { fingerprint, fromFingerprint, identityOf, sameError } from '../client/error-identity';
import { type InstrumentCoordination } from './coordinator';
import { FencedError } from './leases';
import { type SeenEntry, SharedSeen } from './stores';

/**
 * Why a msg is sent again (`msg.redelivered = true`, `msg.redeliveryReason`): `holder-stopped` the replica that
 * held the instrument recorded it and stopped (or lost its lease) before it settled that the msg went out;
 * `shared-memory-lost` Redis lost the replicas' shared memory (FLUSHALL, a restart without persistence) and this
 * replica cannot tell whether another sent it before. Either way it may have been sent once already.
 */
export type RedeliveryReason = 'holder-stopped' | 'shared-memory-lost';

export interface GateItem<T> {
  source: string;
  record: T;
  /** passed without the shared memory: Redis could not be reached (the msg says coordination is lost) */
  lost?: boolean;
  /** sent again, maybe a second time (see RedeliveryReason) */
  redelivered?: RedeliveryReason;
}

export interface GateOutcome<T> {
  raised: GateItem<T>[];
  resolved: GateItem<T>[];
}

/** What the gate needs of a poll node: how it keys its records. */
export interface GateRules<T> {
  keyOf(source: string, record: T): string | undefined;
  /** whether a record may be reported (severity filter): an entry in the shared memory always may resolve */
  wanted?(record: T): boolean;
}

function identityText(record: unknown): string {
  const identity = identityOf(record);
  return identity ? fingerprint(identity) : '';
}

/**
 * Per source that answered a poll, what it listed: key → the records under it (an instrument may list several
 * errors under one id).
 */
export type ListedRecords<T> = ReadonlyMap<string, ReadonlyMap<string, readonly T[]>>;

/**
 * Whether `records` (listed under the entry's key) show the entry's error: the very identity, or one no field of
 * which differs (a record lacking a field is not another error because of that alone, as on one Node-RED).
 */
function listsError(records: readonly unknown[] | undefined, entry: Pick<SeenEntry, 'key' | 'identity'>): boolean {
  if (!records || records.length === 0) return false;
  const known = fromFingerprint(entry.key, entry.identity);
  return records.some((record) => {
    const text = identityText(record);
    if (text === entry.identity) return true;
    const now = identityOf(record);
    return known !== undefined && now !== undefined && sameError({ ...known, id: now.id }, now);
  });
}

/** Emissions remembered during an outage, at most (bounded: an outage of days must not grow memory). */
const MAX_UNSYNCED = 10000;
/** Claims sent and not yet settled, at most; past it the oldest are forgotten (a new holder sends them again, marked). */
const MAX_PENDING = 10000;
/** Open errors mirrored locally, at most (past it the mirror is not used to restore a lost shared memory). */
const MAX_MIRROR = 10000;

interface Pending {
  list: 'raised' | 'resolved';
  entry: SeenEntry;
  claim: number;
  generation: number;
  /** its msg not sent yet (it waits for its deck photo, or for the node's next instance): never settled meanwhile */
  held?: boolean;
}

/**
 * Given to a poll node with each msg the gate passes: called at once, it keeps the msg's claim unsettled until the
 * function it returns is called, when the node really sent the msg (see ErrorGate.filter).
 */
export type HoldClaim = () => () => void;

const noRelease = (): void => undefined;

interface Step<T> {
  list: 'raised' | 'resolved';
  item: GateItem<T>;
  entry: SeenEntry;
  run: (lease: string, claim: number) => Promise<boolean>;
}

/**
 * Two-phase emissions: a msg is claimed in the shared memory under the holder's fencing token, sent, and settled a
 * round later (the msg had that time to leave through the flow). A holder that stops in between leaves the claim
 * unsettled: the next holder sends it again, marked (`redelivered`): at least once, never silently lost. A msg the
 * node does not send at once (it waits for its deck photo, or for the node's next instance) is held: its claim is
 * settled only a round after the node released it (sent it), never by a round or a leave before.
 */
export class ErrorGate<T> {
  /** what this replica emitted while coordination was lost: written to the shared memory once it holds the lease again */
  private unsynced: { list: 'raised' | 'resolved'; entry: SeenEntry }[] = [];
  /** the lease (fencing token) under which the shared memory was last swept: once per takeover is enough */
  private sweptToken?: number;
  /** claims sent, to settle */
  private pending: Pending[] = [];
  private generation = 0;
  /** the open errors of the shared memory as this replica last knew them, and the token it read them under */
  private mirror = new Map<string, SeenEntry>();
  private mirrorToken?: number;
  /** after Redis lost its data: the loss recovered from, and the sources whose msgs are still marked */
  private recovered?: { token: number; seen: number };
  private marking = new Set<string>();
  /**
   * Claims Redis took under `token` and answered after this replica's lease had run out by its clock (a pause): not
   * sent then. The next holder sends them (unsettled, marked); this replica sends them itself, marked, only if it
   * holds the lease under that token again (renewed in time), since no other replica could have.
   */
  private lapsed?: { token: number; steps: Omit<Step<T>, 'run'>[] };

  constructor(
    private readonly coordination: InstrumentCoordination,
    private readonly seen: SharedSeen,
    public rules: GateRules<T>,
  ) {
    coordination.addSettler((all) => this.settle(all));
  }

  /**
   * A poll node (re)deployed under this watch takes the gate over: its claims not yet settled stay, and its first
   * poll sweeps the shared memory again (the new node's memory may not know what the old one raised).
   */
  adopt(rules: GateRules<T>): void {
    this.rules = rules;
    this.sweptToken = undefined;
  }

  /** Whether this replica should poll now: it holds the lease, or coordination is lost (notifications go on). */
  get active(): boolean {
    return this.coordination.isHolder || this.coordination.state.role === 'lost';
  }

  /** Claims not yet settled (tests). */
  get unsettled(): number {
    return this.pending.length;
  }

  /**
   * What the shared memory says before this replica's next poll sweeps it (the first under a lease, or after a
   * redeploy or an outage); undefined when no sweep is due. The sweep resolves what the poll does not list, and raises
   * what it lists that no replica recorded; a watch first brings its own memory of errors no list ever shows
   * (firmware errors, pushed on a socket, which a standby does not hear) in line with it:
   * - `raised`: what the shared memory holds raised (another replica raised it: adopt it, or the sweep would report it
   *   resolved while the instrument still waits);
   * - `gone`: what this replica recorded raised (its mirror) and the shared memory no longer holds: another replica
   *   reported it resolved while this one was a standby (forget it, or the sweep would raise it again). Empty when the
   *   shared memory may have lost data since the mirror was read (told or not yet, see untoldLoss), or the mirror is
   *   incomplete: absence proves nothing.
   */
  async beforeSweep(): Promise<{ raised: GateItem<T>[]; gone: GateItem<T>[] } | undefined> {
    if (!this.coordination.isHolder || (this.coordination.state.token ?? 0) === this.sweptToken) return undefined;
    const stored = await this.seen.stored('raised');
    const raised = stored.map(({ entry }) => ({ source: entry.source, record: entry.record as T }));
    const lost = this.coordination.dataLost;
    // a loss told under this lease and not yet recovered from, or not yet told (a restore that kept the lease, this
    // poll before the round): the mirror may be newer than the shared memory
    const unrecovered = lost !== undefined && this.recovered !== lost && lost.token === this.coordination.state.token;
    if (this.mirrorToken === undefined || (lost && lost.token > this.mirrorToken) || unrecovered) return { raised, gone: [] };
    if (await this.coordination.untoldLoss()) return { raised, gone: [] };
    const held = new Set(stored.map(({ entry }) => SharedSeen.fieldOf(entry)));
    const gone = [...this.mirror]
      .filter(([field]) => !held.has(field))
      .map(([, entry]) => ({ source: entry.source, record: entry.record as T }));
    return { raised, gone };
  }

  /**
   * Filters a poll's (or a pushed frame's) proposals. `listed`: per source that answered this poll, the keys it
   * lists, to find what an earlier holder raised and nobody saw resolve; omit it for a pushed frame. `onPass` hears
   * each msg to send, the moment the shared memory took it; a node that sends it later calls `hold()` then, and the
   * function it returns once it sent it: until then the claim is not settled (a stop meanwhile leaves it to the next
   * holder, marked). Not calling `hold` means sent at once.
   */
  async filter(
    raised: GateItem<T>[],
    resolved: GateItem<T>[],
    listed?: ListedRecords<T>,
    onPass?: (list: 'raised' | 'resolved', item: GateItem<T>, hold: HoldClaim) => void,
  ): Promise<GateOutcome<T>> {
    const out: GateOutcome<T> = { raised: [], resolved: [] };
    // each item goes out the moment the shared memory took it: a replica killed then loses at most that one msg
    const pass = (list: 'raised' | 'resolved', item: GateItem<T>, claim?: Pending): void => {
      out[list].push(item);
      onPass?.(list, item, () => this.hold(claim));
    };
    const passAll = (outcome: GateOutcome<T>): GateOutcome<T> => {
      for (const item of outcome.resolved) pass('resolved', item);
      for (const item of outcome.raised) pass('raised', item);
      return out;
    };
    if (this.coordination.state.role === 'lost') return passAll(this.passLost(raised, resolved));
    if (!(await this.catchUp())) return passAll(this.passLost(raised, resolved));
    if (!this.coordination.isHolder) {
      // the lease ran out by this replica's clock while the poll was on its way (a slow instrument, a clock step, a
      // blocked event loop): its memory took these proposals for sent; the next poll under a lease sweeps again, so
      // what is listed and in no replica's memory is raised, and what left is resolved (none of it is lost)
      this.sweptToken = undefined;
      return out;
    }
    const token = this.coordination.state.token ?? 0;
    const steps: Step<T>[] = [];
    const done = new Set<string>();
    const proposals: Step<T>[] = [];
    for (const item of resolved) {
      const key = this.rules.keyOf(item.source, item.record);
      if (key === undefined) continue;
      const entry: SeenEntry = { source: item.source, key, identity: identityText(item.record), record: item.record };
      done.add(SharedSeen.fieldOf(entry));
      proposals.push({ list: 'resolved', item, entry, run: (lease, claim) => this.resolve(lease, entry, claim) });
    }
    for (const item of raised) {
      const key = this.rules.keyOf(item.source, item.record);
      if (key === undefined) continue;
      const entry: SeenEntry = { source: item.source, key, identity: identityText(item.record), record: item.record };
      proposals.push({ list: 'raised', item, entry, run: (lease, claim) => this.seen.raise(lease, entry, claim) });
    }
    const raisedKeys = new Set(proposals.filter((p) => p.list === 'raised').map((p) => SharedSeen.fieldOf(p.entry)));
    let index = 0;
    let kept = new Set<Step<T>>();
    try {
      await this.recover(token);
      // a sweep due, and Redis lost data since the last round, which has not told it yet (a restore that kept this
      // lease): what the sweep finds missing may be what the loss took (raised here before it): recovered first
      if (listed && token !== this.sweptToken && (await this.coordination.untoldLoss()))
        await this.recover(token, { token, seen: token });
      // claims taken under this very lease and not sent when their answer came after it ran out by this replica's clock
      kept = new Set<Step<T>>(
        (this.lapsed?.token === token ? this.lapsed.steps : []).map((k) => ({
          ...k,
          item: { ...k.item, redelivered: 'holder-stopped' as const },
          run: () => Promise.resolve(true),
        })),
      );
      this.lapsed = undefined;
      steps.push(...kept);
      // after a takeover: claims an earlier holder left unsettled (sent again, marked), and errors it raised that are
      // no longer listed (resolved while nobody watched). Afterwards this replica's own memory proposes everything.
      if (listed && token !== this.sweptToken) steps.push(...(await this.sweep(token, listed, done, raisedKeys)));
      steps.push(...proposals);
      for (; index < steps.length; index++) {
        const step = steps[index];
        if (!(await step.run(this.coordination.leaseValue('raised / resolved'), token))) continue;
        if (this.coordination.lapsed(token)) {
          // Redis took the claim under the lease, and its answer came after the lease ran out by this replica's clock
          // (paused meanwhile): another replica may hold the instrument and have sent it already (the claim being
          // unsettled, marked). Not sent here; the rest is left to the next poll under a lease, which sweeps again
          // (with those kept from before that this poll did not reach)
          const left = [step, ...steps.slice(index + 1).filter((k) => kept.has(k))];
          this.lapsed = { token, steps: left.map(({ list, item, entry }) => ({ list, item, entry })) };
          this.sweptToken = undefined;
          return out;
        }
        const claim = this.remember(step.list, step.entry, token);
        const item =
          this.marking.has(step.item.source) && !step.item.redelivered
            ? { ...step.item, redelivered: 'shared-memory-lost' as const }
            : step.item;
        pass(step.list, item, claim);
        // the lease was given up (a handover) while this step was on its way: settled at once, so that the next
        // holder does not send it again (it went out from this live replica); one held (not sent yet) stays unsettled
        if (!this.coordination.isHolder) await this.settle(true);
      }
      if (listed) for (const source of listed.keys()) this.marking.delete(source);
    } catch (err) {
      // fenced: another replica holds the instrument now; what was not recorded is still open for it (it raises what
      // is not in the shared memory, and resolves what is there and no longer listed). Nothing is lost by stopping.
      if (err instanceof FencedError) {
        // those kept from a lapse that this poll did not reach wait for the lease under their token again
        const left = steps.slice(index).filter((k) => kept.has(k));
        if (left.length > 0) this.lapsed = { token, steps: left.map(({ list, item, entry }) => ({ list, item, entry })) };
        return out;
      }
      // Redis failed: nothing can be proved, the rest goes out marked (a duplicate beats a miss)
      const rest = steps.slice(index);
      passAll(
        this.passLost(
          rest.filter((s) => s.list === 'raised').map((s) => s.item),
          rest.filter((s) => s.list === 'resolved').map((s) => s.item),
        ),
      );
    }
    return out;
  }

  /**
   * After Redis lost its data (this replica's grant found the fence counter behind, the epoch changed, or a write
   * sequence went back): what this replica knew open when it held the lease just before (or still holds) is written
   * back (its later resolutions then still go out; a later holder finds them), and until each source has been listed
   * once, what goes out is marked `shared-memory-lost` (another replica may have sent it). Claims sent and not yet
   * settled stay: settling is compare-and-set, a claim the loss took is left alone, one restored with a snapshot
   * is settled as before.
   */
  private async recover(token: number, lost = this.coordination.dataLost): Promise<void> {
    if (!lost || lost.token !== token || this.recovered === lost) return;
    this.recovered = lost;
    this.sweptToken = undefined;
    this.marking = new Set(['A', 'B']);
    if (this.mirrorToken !== lost.seen) return;
    for (const entry of this.mirror.values()) await this.seen.catchUp('raise', entry);
    if (lost.seen !== token) return;
    // the same lease before and after (a restore of a snapshot that held it): a claim under it that this replica
    // no longer has pending was settled before the loss (its msg went out): settled again, not sent by the next holder
    const mine = (e: SeenEntry, list: 'raised' | 'resolved'): boolean =>
      this.pending.some((p) => p.list === list && SharedSeen.fieldOf(p.entry) === SharedSeen.fieldOf(e));
    for (const { entry } of await this.seen.stored('raised'))
      if (entry.claim === token && !mine(entry, 'raised')) await this.seen.settleRaise(entry, token);
    for (const { entry } of await this.seen.stored('resolved'))
      if (entry.claim === token && !mine(entry, 'resolved')) await this.seen.settleResolve(entry, token);
  }

  /** The steps of a sweep after a takeover (see filter). */
  private async sweep(
    token: number,
    listed: ListedRecords<T>,
    done: Set<string>,
    proposed: ReadonlySet<string>,
  ): Promise<Step<T>[]> {
    this.sweptToken = token;
    await this.settle(true); // what this live replica sent itself went out: settled, never sent again
    const steps: Step<T>[] = [];
    const stored = await this.seen.stored('raised');
    this.mirror = new Map(stored.slice(0, MAX_MIRROR).map((s) => [SharedSeen.fieldOf(s.entry), s.entry]));
    this.mirrorToken = stored.length <= MAX_MIRROR ? token : undefined;
    for (const s of stored) {
      const { entry } = s;
      const item: GateItem<T> = { source: entry.source, record: entry.record as T };
      if (entry.claim !== undefined && entry.claim !== token) {
        // recorded by an earlier holder that never settled it: it may not have gone out
        const again = { ...item, redelivered: 'holder-stopped' as const };
        steps.push({ list: 'raised', item: again, entry, run: (lease, claim) => this.seen.takeOver(lease, 'raised', s, claim) });
      }
      // no longer listed: no record under its key is this error (several errors may be listed under one id)
      const keys = listed.get(entry.source);
      if (!keys || listsError(keys.get(entry.key), entry) || done.has(SharedSeen.fieldOf(entry))) continue;
      const resolving = { ...entry };
      steps.push({ list: 'resolved', item, entry: resolving, run: (lease, claim) => this.resolve(lease, resolving, claim) });
    }
    // listed, in no replica's shared memory, and not proposed: a holder whose lease went while it recorded them (its
    // memory took them for raised) never sent them: raised now (no replica recorded them, so none sent them)
    const storedUnder = new Map<string, SeenEntry[]>();
    for (const { entry } of stored) {
      const under = SharedSeen.legacyFieldOf(entry);
      storedUnder.set(under, [...(storedUnder.get(under) ?? []), entry]);
    }
    for (const [source, byKey] of listed) {
      for (const [key, records] of byKey) {
        const known = storedUnder.get(SharedSeen.legacyFieldOf({ source, key })) ?? [];
        const taken = new Set<string>();
        for (const record of records) {
          const entry: SeenEntry = { source, key, identity: identityText(record), record };
          const field = SharedSeen.fieldOf(entry);
          // the same error listed twice counts once; one a replica recorded (or that differs only by a field one of
          // them lacks) is not new
          if (taken.has(field) || proposed.has(field) || known.some((k) => listsError([record], k))) continue;
          taken.add(field);
          if (this.rules.wanted?.(record) === false) continue;
          steps.push({
            list: 'raised',
            item: { source, record },
            entry,
            run: (lease, claim) => this.seen.raise(lease, entry, claim),
          });
        }
      }
    }
    for (const s of await this.seen.stored('resolved')) {
      if (s.entry.claim === token) continue;
      if (s.entry.unsettledRaise) {
        // its *raised* msg had not been settled either: it may be lost too, it goes out again first
        const raisedAgain: GateItem<T> = { source: s.entry.source, record: s.entry.record as T, redelivered: 'holder-stopped' };
        steps.push({ list: 'raised', item: raisedAgain, entry: s.entry, run: () => Promise.resolve(true) });
      }
      const item: GateItem<T> = { source: s.entry.source, record: s.entry.record as T, redelivered: 'holder-stopped' };
      steps.push({
        list: 'resolved',
        item,
        entry: s.entry,
        run: (lease, claim) => this.seen.takeOver(lease, 'resolved', s, claim),
      });
    }
    return steps;
  }

  /**
   * Claims a resolution; when the *raised* msg of the same error is still unsettled here, the resolution says so: a
   * holder killed before settling either leaves both to be sent again (a resolution never comes without its raise).
   */
  private resolve(lease: string, entry: SeenEntry, claim: number): Promise<boolean> {
    const unsettled = this.pending.some(
      (p) =>
        p.list === 'raised' &&
        p.entry.source === entry.source &&
        p.entry.key === entry.key &&
        p.entry.identity === entry.identity,
    );
    if (unsettled) entry.unsettledRaise = true;
    else delete entry.unsettledRaise;
    return this.seen.resolve(lease, entry, claim);
  }

  /** A claim went out: settled a round later; the local mirror of open errors follows. */
  private remember(list: 'raised' | 'resolved', entry: SeenEntry, claim: number): Pending {
    const field = SharedSeen.fieldOf(entry);
    const { source, key, identity, record } = entry;
    const flag = list === 'resolved' && entry.unsettledRaise ? { unsettledRaise: true } : {};
    if (list === 'raised') {
      if (this.mirror.size < MAX_MIRROR) this.mirror.set(field, { source, key, identity, record });
      else this.mirrorToken = undefined;
    } else this.mirror.delete(field);
    const pending: Pending = { list, entry: { source, key, identity, record, ...flag }, claim, generation: this.generation };
    this.pending.push(pending);
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
    return pending;
  }

  /**
   * Holds a claim whose msg the node sends later: no settle takes it until the returned function releases it (the
   * msg sent), then the round after. Without a claim (a msg passed without the shared memory) there is nothing to hold.
   */
  private hold(claim: Pending | undefined): () => void {
    if (!claim || !this.pending.includes(claim)) return noRelease;
    claim.held = true;
    return () => {
      if (!claim.held) return;
      claim.held = false;
      claim.generation = this.generation; // it leaves through the flow now: a round from now on
    };
  }

  /**
   * Settles the claims sent before the last call (`all`: every claim sent): they had a round to leave through the
   * flow. A held claim (its msg not sent yet) is never settled: at a stop it stays unsettled, for the next holder to
   * send again. A Redis failure keeps the rest, in order, for the next call.
   */
  async settle(all: boolean): Promise<void> {
    const before = this.generation++;
    // in order, past the held ones (left in place); a claim taken meanwhile is reached too (`all`: a leave)
    let i = 0;
    while (i < this.pending.length) {
      const p = this.pending[i];
      if (p.held || (!all && p.generation >= before)) {
        i++;
        continue;
      }
      if (p.list === 'raised') await this.seen.settleRaise(p.entry, p.claim);
      else await this.seen.settleResolve(p.entry, p.claim);
      // MAX_PENDING may have dropped the oldest meanwhile
      const at = this.pending[i] === p ? i : this.pending.indexOf(p);
      if (at >= 0) this.pending.splice(at, 1);
      i = Math.max(0, at);
    }
  }

  /**
   * Writes the msgs this replica sent while Redis was unreachable, whatever its role now (a standby calls it at each
   * of its turns): the shared memory learns what went out (no second raised, no missed resolved), also when the
   * lease moves to another replica right after the outage. False while Redis still fails.
   */
  async catchUp(): Promise<boolean> {
    if (this.coordination.state.role === 'lost') return this.unsynced.length === 0;
    try {
      while (this.unsynced.length > 0) {
        const { list, entry } = this.unsynced[0];
        await this.seen.catchUp(list === 'raised' ? 'raise' : 'resolve', entry);
        this.unsynced.shift();
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Everything goes out marked, and is remembered to be written to the shared memory later. */
  private passLost(raised: GateItem<T>[], resolved: GateItem<T>[]): GateOutcome<T> {
    this.sweptToken = undefined; // after the outage, look again at what others raised
    const mark = (list: 'raised' | 'resolved', items: GateItem<T>[]): GateItem<T>[] =>
      items.map((item) => {
        const key = this.rules.keyOf(item.source, item.record);
        if (key !== undefined)
          this.unsynced.push({
            list,
            entry: { source: item.source, key, identity: identityText(item.record), record: item.record },
          });
        return { ...item, lost: true };
      });
    const out = { raised: mark('raised', raised), resolved: mark('resolved', resolved) };
    if (this.unsynced.length > MAX_UNSYNCED) this.unsynced.splice(0, this.unsynced.length - MAX_UNSYNCED);
    return out;
  }
}
