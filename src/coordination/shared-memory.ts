/**
 * A poll node's memory of what it reported (lh-run-watch: the last run state, the run being watched, the runs
 * already reported finished), kept in Redis per instrument and node when coordinated: the holder reads it once per
 * lease (a new holder continues where the old one stopped) and writes it, fenced by its lease, after each decision
 * and before anything is sent; a paused old holder's write is refused, and it sends nothing.
 */
import { type InstrumentCoordination } from './coordinator';
import { type InstrumentKeys } from './keys';
import { fenced, FencedError } from './leases';
import { FENCED_SET } from './scripts';
import { type StoreRedis } from './stores';

/**
 * A shared memory is kept this long after its last write: the memory of a node removed from the flows (or copied
 * under a new id) does not stay in Redis for ever. The holder writes it again at least every SHARED_MEMORY_REFRESH_MS,
 * changed or not, so a watched instrument's memory never expires while it is idle.
 */
export const SHARED_MEMORY_TTL_MS = 30 * 24 * 3600_000;
export const SHARED_MEMORY_REFRESH_MS = 24 * 3600_000;

/** One JSON value per instrument and name (a node id, the same on every replica), written only by the lease holder. */
export class SharedValue {
  constructor(
    private readonly redis: StoreRedis,
    private readonly keys: InstrumentKeys,
    private readonly name: string,
  ) {}

  get key(): string {
    return this.keys.shared(`memory:${this.name}`);
  }

  /** The value and the fencing token it was written under (0: written by a version that did not say). */
  async read(): Promise<{ token: number; json: string } | null> {
    const raw = await this.redis.get(this.key);
    if (raw === null) return null;
    const nl = raw.indexOf('\n');
    const token = nl > 0 ? Number(raw.slice(0, nl)) : NaN;
    return Number.isSafeInteger(token) ? { token, json: raw.slice(nl + 1) } : { token: 0, json: raw };
  }

  /**
   * Written under the lease `<token>:<replica>` (the token is kept with the value), kept for `ttlMs`. Throws
   * FencedError when `leaseValue` no longer holds the lease (nothing written).
   */
  async write(leaseValue: string, json: string, ttlMs = SHARED_MEMORY_TTL_MS): Promise<void> {
    const value = `${leaseValue.slice(0, Math.max(0, leaseValue.indexOf(':')))}\n${json}`;
    await fenced('run-watch memory', () => this.redis.eval(FENCED_SET, 2, this.keys.lease, this.key, leaseValue, value, ttlMs));
  }
}

/** What a save said: `ok` send; `fenced` another replica holds the instrument, send nothing; `lost` send marked. */
export type SaveVerdict = 'ok' | 'fenced' | 'lost';

/** The holder's side of a SharedValue: when to read it, how to write it, and whether to poll at all. */
export class CoordinatedMemory<T> {
  /** the lease token under which the local memory was last read or written: the local copy is current while it holds */
  private currentToken?: number;
  /**
   * the local memory went further than the shared one while Redis failed (what this replica sent, marked): set to
   * the newest fencing token this replica knew then. A shared memory written under a newer token was written after
   * (by a holder that continued, its memory the newer one); else this replica's own is what went out last.
   */
  private aheadAfter?: number;
  /** this poll decides on a memory that could not be read: what it sends is marked */
  private unproved = false;
  /** what was last written under `currentToken`: an unchanged memory is not written again (until its refresh) */
  private lastJson?: string;
  /** when it was last written (the coordination's clock) */
  private lastWriteAt = 0;
  /**
   * the loss of Redis's data (the coordination's dataLost) last written back after: a holder whose lease came back
   * with an older snapshot has the newer memory here, and Redis the older one until this holder writes it again
   */
  private wroteBackAfter?: { token: number; seen: number };
  /** the save in flight, if any (the memory is shared by the instances of its node over a redeploy) */
  private saving?: Promise<SaveVerdict>;

  constructor(
    private readonly coordination: InstrumentCoordination,
    private readonly shared: SharedValue,
    private readonly parse: (json: string) => T | undefined,
  ) {}

  private get ahead(): boolean {
    return this.aheadAfter !== undefined;
  }

  private set ahead(value: boolean) {
    if (!value) this.aheadAfter = undefined;
    else this.aheadAfter ??= this.coordination.knownToken;
  }

  /** Whether this replica should poll now: it holds the lease, or coordination is lost (notifications go on). */
  get active(): boolean {
    return this.coordination.isHolder || this.coordination.state.role === 'lost';
  }

  /**
   * Before a poll's decisions: the shared memory when this replica just took the lease (undefined when none was
   * written yet, `fresh` is then the caller's start), or `'local'` when the local memory is current.
   */
  async load(): Promise<{ memory: T | undefined } | 'local'> {
    // a save of a closed instance of the node (a redeploy) still on its way: its poll's decisions are in the local
    // memory once it answers (that instance awaited it first), and this poll decides after them
    if (this.saving) await this.saving.catch(() => undefined);
    this.unproved = false;
    const state = this.coordination.state;
    if (!this.coordination.isHolder) {
      if (state.role === 'lost') this.ahead = true; // it notifies on its own memory: that memory is what went out
      this.currentToken = undefined;
      return 'local';
    }
    if (state.token === this.currentToken) return 'local';
    try {
      const stored = await this.shared.read();
      this.currentToken = state.token;
      // what this replica sent while Redis failed is newer than a memory written before: written back by the save
      if (this.ahead && (stored?.token ?? 0) <= (this.aheadAfter ?? 0)) return 'local';
      this.ahead = false;
      return { memory: stored === null ? undefined : this.parse(stored.json) };
    } catch {
      this.unproved = true; // Redis failed: decide on the local memory, send marked (a duplicate beats a miss)
      return 'local';
    }
  }

  /** After the decisions, before sending: writes the memory under the lease. */
  save(memory: T): Promise<SaveVerdict> {
    const saving = this.saveNow(memory);
    this.saving = saving;
    saving
      .finally(() => {
        if (this.saving === saving) this.saving = undefined;
      })
      .catch(() => undefined);
    return saving;
  }

  private async saveNow(memory: T): Promise<SaveVerdict> {
    let lease: string;
    try {
      lease = this.coordination.leaseValue('run-watch memory');
    } catch {
      if (this.coordination.state.role === 'lost') {
        this.ahead = true;
        return 'lost';
      }
      this.currentToken = undefined;
      return 'fenced';
    }
    const token = this.coordination.state.token;
    const json = JSON.stringify(memory);
    const now = this.coordination.now();
    const fresh = now - this.lastWriteAt < SHARED_MEMORY_REFRESH_MS;
    // Redis lost data under this very lease (restored with an older snapshot): the shared memory may be older than
    // what this holder reported since; written back once, or a later holder (or this node redeployed) reports it again
    const lost = this.coordination.dataLost;
    const writeBack = lost !== undefined && lost.token === token && lost !== this.wroteBackAfter;
    const same = json === this.lastJson && token === this.currentToken && !this.ahead && !this.unproved;
    if (same && fresh && !writeBack) return 'ok';
    try {
      await this.shared.write(lease, json);
      if (writeBack) this.wroteBackAfter = lost;
      this.lastWriteAt = now;
      this.lastJson = json;
      this.currentToken = token;
      this.ahead = false;
      return this.unproved ? 'lost' : 'ok';
    } catch (err) {
      if (err instanceof FencedError) {
        this.currentToken = undefined;
        this.ahead = false;
        return 'fenced';
      }
      this.ahead = true;
      return 'lost';
    }
  }

  /** Calls `listener` when this replica's role changes (a new holder polls at once). */
  onChange(listener: () => void): () => void {
    return this.coordination.onChange(listener);
  }
}
