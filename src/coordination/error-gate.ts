/**
 * Raised / resolved across replicas, exactly once: a poll node's local memory proposes what it saw raised and
 * resolved; the gate lets through only what the shared memory (Redis, fenced by the lease) says no replica emitted
 * yet, and adds the errors raised by an earlier holder that are no longer listed (resolved while nobody watched).
 * Without the lease nothing passes; with Redis lost everything passes, marked (a duplicate beats a miss).
 */
import { fingerprint, identityOf } from '../client/error-identity';
import { InstrumentCoordination } from './coordinator';
import { FencedError } from './leases';
import { SeenEntry, SharedSeen } from './stores';

export interface GateItem<T> {
  source: string;
  record: T;
  /** passed without the shared memory: Redis could not be reached (the msg says coordination is lost) */
  lost?: boolean;
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

/** Emissions remembered during an outage, at most (bounded: an outage of days must not grow memory). */
const MAX_UNSYNCED = 10000;

export class ErrorGate<T> {
  /** what this replica emitted while coordination was lost: written to the shared memory once it holds the lease again */
  private unsynced: { list: 'raised' | 'resolved'; entry: SeenEntry }[] = [];
  /** the lease (fencing token) under which the shared memory was last swept: once per takeover is enough */
  private sweptToken?: number;

  constructor(
    private readonly coordination: InstrumentCoordination,
    private readonly seen: SharedSeen,
    private readonly rules: GateRules<T>,
  ) {}

  /** Whether this replica should poll now: it holds the lease, or coordination is lost (notifications go on). */
  get active(): boolean {
    return this.coordination.isHolder || this.coordination.state.role === 'lost';
  }

  /**
   * Filters a poll's (or a pushed frame's) proposals. `listed`: per source that answered this poll, the keys it
   * lists, to find what an earlier holder raised and nobody saw resolve; omit it for a pushed frame.
   */
  async filter(
    raised: GateItem<T>[],
    resolved: GateItem<T>[],
    listed?: ReadonlyMap<string, ReadonlySet<string>>,
    onPass?: (list: 'raised' | 'resolved', item: GateItem<T>) => void,
  ): Promise<GateOutcome<T>> {
    const out: GateOutcome<T> = { raised: [], resolved: [] };
    // each item goes out the moment the shared memory took it: a replica killed then loses at most that one msg
    const pass = (list: 'raised' | 'resolved', item: GateItem<T>): void => {
      out[list].push(item);
      onPass?.(list, item);
    };
    const passAll = (outcome: GateOutcome<T>): GateOutcome<T> => {
      for (const item of outcome.resolved) pass('resolved', item);
      for (const item of outcome.raised) pass('raised', item);
      return out;
    };
    if (this.coordination.state.role === 'lost') return passAll(this.passLost(raised, resolved));
    if (!(await this.catchUp())) return passAll(this.passLost(raised, resolved));
    if (!this.coordination.isHolder) return out;
    // one step at a time, so that a failure leaves every item either decided or in `pending`
    const steps: { list: 'raised' | 'resolved'; item: GateItem<T>; run: (lease: string) => Promise<boolean> }[] = [];
    const done = new Set<string>();
    for (const item of resolved) {
      const key = this.rules.keyOf(item.source, item.record);
      if (key === undefined) continue;
      done.add(`${item.source}:${key}`);
      steps.push({
        list: 'resolved',
        item,
        run: (lease) => this.seen.resolve(lease, { source: item.source, key, identity: identityText(item.record) }),
      });
    }
    for (const item of raised) {
      const key = this.rules.keyOf(item.source, item.record);
      if (key === undefined) continue;
      const entry: SeenEntry = { source: item.source, key, identity: identityText(item.record), record: item.record };
      steps.push({ list: 'raised', item, run: (lease) => this.seen.raise(lease, entry) });
    }
    let index = 0;
    try {
      // errors an earlier holder raised that are no longer listed: resolved while nobody watched
      // (afterwards this replica's own memory proposes every resolution: it has seen every error it holds)
      const token = this.coordination.state.token;
      if (listed && token !== this.sweptToken) {
        this.sweptToken = token;
        for (const entry of await this.seen.open()) {
          const keys = listed.get(entry.source);
          if (!keys || keys.has(entry.key) || done.has(`${entry.source}:${entry.key}`)) continue;
          const item = { source: entry.source, record: entry.record as T };
          steps.push({ list: 'resolved', item, run: (lease) => this.seen.resolve(lease, entry) });
        }
      }
      for (; index < steps.length; index++) {
        const step = steps[index];
        if (await step.run(this.coordination.leaseValue('raised / resolved'))) pass(step.list, step.item);
      }
    } catch (err) {
      // fenced: another replica holds the instrument now; what was not recorded is still open for it (it raises what
      // is not in the shared memory, and resolves what is there and no longer listed). Nothing is lost by stopping.
      if (err instanceof FencedError) return out;
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
