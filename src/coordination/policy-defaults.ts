/**
 * A policy node's pending defaults under coordination: each default is written to Redis when it is scheduled (by the
 * holder), and taken from there (fenced, once) by whichever replica sends it: the holder when its timer fires, or a
 * new holder that finds it due after a failover. A default is therefore sent by one replica only, and a holder that
 * dies leaves its defaults to the next one. The node's own book (memory and context store) stays as it is.
 */
import { type InstrumentCoordination } from './coordinator';
import { FencedError } from './leases';
import { type SharedDefaults } from './stores';

/** What to do with a default whose time came: send it, drop it (another replica has it, or it was cancelled), or look again later (Redis unreachable: no automatic answer). */
export type TakeVerdict = 'send' | 'drop' | 'later';

export class CoordinatedDefaults<P extends { key: string; deadline: number }> {
  /** defaults this replica took (it sends them, possibly after a wait for another answer in flight) */
  private readonly taken = new Set<string>();
  /** defaults that could not be written to Redis: only this replica knows them, so it sends them itself */
  private readonly unshared = new Set<string>();
  /**
   * defaults this replica wrote to the shared schedule as the holder, with the loss of Redis's data it knew then (the
   * coordination's dataLost): one Redis lost since is this replica's to send (see take)
   */
  private readonly scheduledUnder = new Map<string, { token: number; seen: number } | undefined>();

  constructor(
    private readonly coordination: InstrumentCoordination,
    private readonly shared: SharedDefaults,
  ) {}

  /**
   * A default scheduled by this replica's policy node. `lost`: its error reached the node in a msg this replica sent
   * while coordination was lost (every replica notified it, and the shared memory learns of it only later, so the
   * holder may never raise it): unless this replica holds the instrument and can schedule it, it keeps it and, once
   * Redis is back, sends it itself as the holder or hands it to the holder's schedule (see take).
   */
  async add(p: P, options: { lost?: boolean } = {}): Promise<void> {
    if (this.coordination.isHolder) {
      try {
        await this.shared.schedule(this.coordination.leaseValue('default'), p.key, p.deadline, p);
        this.unshared.delete(p.key);
        this.scheduledUnder.set(p.key, this.coordination.dataLost);
      } catch {
        // not written: Redis unreachable, or the lease moved on since this replica raised the error as its holder
        // (the shared memory has it raised, so the new holder will not raise it): this replica keeps it, and sends it
        // or hands it to the holder's schedule when it falls due (see take)
        this.unshared.add(p.key);
      }
      return;
    }
    if (options.lost || this.coordination.state.role === 'lost') this.unshared.add(p.key);
    // otherwise a standby: its node got the error from another path; the holder's own policy node schedules it
  }

  /** The error was answered or resolved: no replica sends its default. */
  async cancel(key: string): Promise<void> {
    this.taken.delete(key);
    this.unshared.delete(key);
    this.scheduledUnder.delete(key);
    await this.shared.cancel(key).catch(() => false);
  }

  /** Asked when a default's timer fires (`p`: the default, handed to the holder when only this replica knows it). */
  async take(key: string, p?: P): Promise<TakeVerdict> {
    if (this.taken.has(key)) return 'send';
    if (this.coordination.state.role === 'lost') return 'later';
    try {
      if (this.unshared.has(key) && !this.coordination.isHolder) return await this.handOver(key, p);
      if (await this.shared.take(this.coordination.leaseValue('default'), key)) {
        this.taken.add(key);
        return 'send';
      }
      if (this.unshared.has(key) || this.lostSinceScheduled(key)) {
        this.taken.add(key);
        return 'send';
      }
      // the schedule may have gone with data Redis lost since this replica's last round, not told yet (a restart on an
      // older snapshot that kept the lease): that round tells it (holding then, it sends it, see lostSinceScheduled)
      if (this.scheduledUnder.has(key) && (await this.coordination.untoldLoss())) return 'later';
      this.scheduledUnder.delete(key);
      return 'drop';
    } catch (err) {
      if (!(err instanceof FencedError)) return 'later';
      // another replica holds the instrument (this one has not noticed yet): a default only this replica knows is
      // handed to it rather than dropped
      if (this.unshared.has(key)) return this.handOver(key, p).catch((): TakeVerdict => 'later');
      // or the lease went with Redis's data (a FLUSHALL, a restart without persistence), the schedule with it, and
      // this replica still holds by its own clock: its next round tells which (holding again, it sends it, see
      // lostSinceScheduled; a standby then drops it); bounded by the lease's local validity
      if (this.scheduledUnder.has(key) && this.coordination.isHolder) return 'later';
      this.scheduledUnder.delete(key);
      return 'drop';
    }
  }

  /**
   * Whether Redis lost its data since this replica scheduled the default (FLUSHALL, a restart without persistence,
   * an eviction) and it holds the instrument under the lease that recovers from that loss: the schedule went with
   * the data, and only this replica still knows the default. Sent by it (the answer ledger, written back by every
   * replica after the loss, and the instrument's list refuse it if another replica answered the error before).
   */
  private lostSinceScheduled(key: string): boolean {
    if (!this.scheduledUnder.has(key) || !this.coordination.isHolder) return false;
    const lost = this.coordination.dataLost;
    return lost !== undefined && lost !== this.scheduledUnder.get(key) && lost.token === this.coordination.state.token;
  }

  /**
   * Only this replica may know the default (it was not written to Redis): the holder's schedule gets it, due now (a
   * default the holder scheduled itself keeps its own time); the holder's sweep sends it, once. Throws (kept here,
   * looked at again later) when Redis does not take it.
   */
  private async handOver(key: string, p: P | undefined): Promise<TakeVerdict> {
    if (!p) return 'later'; // nothing to hand over with: kept until the caller gives it
    await this.shared.giveBack(key, Math.min(p.deadline, this.coordination.now()), p);
    this.unshared.delete(key);
    return 'drop';
  }

  /**
   * The holder's sweep: defaults due by `now` that no replica sent (their holder died): this replica sends them. Those
   * of `timed` (this replica's own timers send them, on time by the monotonic clock) are left in the schedule: `now`
   * is the wall clock's, which a step forward (NTP, a resumed VM) would make answer them early, before the deadline a
   * person was told. A default another replica scheduled is due by that replica's clock: early or late here by the
   * two hosts' skew (see README, "Several Node-REDs").
   */
  async due(now: number, timed: Iterable<string> = []): Promise<P[]> {
    if (!this.coordination.isHolder) return [];
    try {
      const found = await this.shared.takeDue(this.coordination.leaseValue('default'), now, undefined, [...timed]);
      for (const d of found) this.taken.add(d.key);
      return found.map((d) => d.body as P);
    } catch {
      return [];
    }
  }

  /**
   * This replica took the default but its answer was refused by the fence (another replica holds the instrument
   * now): back to the shared schedule, due at once, for the holder's sweep. True when Redis took it; false: kept
   * here, and handed over when the caller asks again (take).
   */
  async giveBack(p: P): Promise<boolean> {
    this.taken.delete(p.key);
    this.unshared.delete(p.key);
    try {
      await this.shared.giveBack(p.key, Math.min(p.deadline, this.coordination.now()), p);
      return true;
    } catch {
      // Redis did not take it: only this replica has it now; it hands it over when the caller asks again (take)
      this.unshared.add(p.key);
      return false;
    }
  }

  /**
   * A default this replica took waits (another answer is in flight, its deadline moved to the next check): back in the
   * shared schedule, so that if this replica dies meanwhile the next holder sends it; this replica takes it again
   * when it falls due (its own timer or its sweep). Kept here when Redis cannot take it.
   */
  async requeue(p: P): Promise<void> {
    if (!this.taken.has(p.key)) return; // still in the shared schedule, or known here only (unshared)
    this.taken.delete(p.key); // before the write: a sweep that takes it back once it is there marks it again
    try {
      await this.shared.giveBack(p.key, p.deadline, p);
    } catch {
      this.taken.add(p.key); // Redis unreachable: this replica keeps it and sends it itself
    }
  }

  /**
   * The defaults only this replica has now (not in the shared schedule: kept here, or taken to be sent): what its
   * node keeps over a redeploy or a restart (see keep), so that none is dropped by the next instance.
   */
  mine(): string[] {
    return [...new Set([...this.unshared, ...this.taken])];
  }

  /**
   * A default this replica had (mine()) before its node was redeployed or restarted: it sends it as the holder (the
   * shared answer ledger refuses an answer given already) or hands it to the holder's schedule (see take).
   */
  keep(key: string): void {
    this.unshared.add(key);
  }

  /** Forgets a default this replica sent (or gave up). */
  done(key: string): void {
    this.taken.delete(key);
    this.unshared.delete(key);
    this.scheduledUnder.delete(key);
  }
}
