/**
 * Where in its interval each poll loop of this Node-RED polls, so that a fleet of instruments spreads its polls
 * evenly instead of polling together (a thundering herd after a deploy, a restart or a wave of reconnects).
 *
 * Every loop joins the group of its interval length (one group per length, process-wide) under a key (the
 * instrument and the node). The members of a group, ordered by key, get equally spaced slots: member r of N polls
 * at origin + r·L/N (mod L), L the interval, origin the time the group was created. So any N loops that run
 * together have at most ⌈N/k⌉ + 1 polls in any L/k of time, however they started. The slot is a pure function of
 * the member's rank, the group's size and the interval; a loop asks for it each time it plans its next poll, so a
 * change of the group (a deploy adding or removing loops) re-spreads every loop within one interval, and while the
 * group stays the same each loop polls exactly every L.
 *
 * A poll that does not wait for the slot (a push, an input msg) does not move it: the next scheduled poll is the
 * next slot, never more than L after the poll before. Catch-up polls (a loop's first poll, a poll after its socket
 * reconnected) go through the group's pacer: first come, first served, at most one per C/N (C = min(L, 5 s)), the
 * first at once. A lone reconnect therefore polls at once, and a deploy of 1,000 loops or a reconnect wave of the
 * whole fleet polls at the fleet's steady rate instead of in one burst (at most ⌈N/k⌉ + 1 in any C/k).
 */
/**
 * Loops starting or catching up together spread over the interval, or this much time when the interval is longer:
 * a reconnect wave then polls no faster than the fleet's steady rate (at most 5 s for the whole fleet).
 */
export const CATCH_UP_WINDOW_MS = 5000;

/** One loop's place in its group. */
export interface PollSlot {
  /** The interval of the group (ms). */
  readonly intervalMs: number;
  /** Where in the interval this loop polls: rank·L/N, ms after the group's origin (mod L). */
  phaseMs(): number;
  /**
   * The delay from a poll's start to the next slot: in (0, L], exactly L while the group does not change and the
   * poll started on its slot. A poll started anywhere else (a push) is followed by the slot, not by L later.
   */
  delayAfter(startMs: number): number;
  /**
   * Asks for a catch-up poll: `fire(requestedAt)` is called when the group's pacer lets it (at once when no other
   * catch-up is waiting; within C of the request). A catch-up already waiting is kept, not asked for twice.
   */
  catchUp(fire: (requestedAt: number) => void): void;
  /** Leaves the group (the node closed): the others re-spread over the freed slot; a waiting catch-up is dropped. */
  leave(): void;
}

interface Member {
  key: string;
  seq: number;
  rank: number;
  /** a catch-up waiting in the pacer: when it was asked for, and what to call */
  waiting?: { requestedAt: number; fire: (requestedAt: number) => void };
}

class Group {
  readonly members: Member[] = [];
  /** catch-ups waiting, first come first served */
  private queue: Member[] = [];
  private lastFired = Number.NEGATIVE_INFINITY;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly intervalMs: number,
    readonly origin: number,
    private readonly now: () => number,
  ) {}

  add(member: Member): void {
    const at = this.members.findIndex((m) => compare(member, m) < 0);
    if (at < 0) this.members.push(member);
    else this.members.splice(at, 0, member);
    this.rerank();
    if (this.queue.length > 0) this.pumpSoon(); // the spacing C/N changed
  }

  remove(member: Member): void {
    const at = this.members.indexOf(member);
    if (at < 0) return;
    this.members.splice(at, 1);
    this.rerank();
    if (member.waiting) {
      member.waiting = undefined;
      this.queue = this.queue.filter((m) => m !== member);
    }
    if (this.queue.length > 0) this.pumpSoon();
    else this.stopPacer();
  }

  enqueue(member: Member, fire: (requestedAt: number) => void): void {
    if (member.waiting) return;
    // an idle pacer lets the first catch-up go at once; a busy one keeps its rhythm
    if (this.queue.length === 0 && this.lastFired + this.spacingMs <= this.now()) this.lastFired = Number.NEGATIVE_INFINITY;
    member.waiting = { requestedAt: this.now(), fire };
    this.queue.push(member);
    this.pumpSoon();
  }

  /** The pacer's spacing: C/N, so the whole group catching up takes C. */
  private get spacingMs(): number {
    return Math.min(this.intervalMs, CATCH_UP_WINDOW_MS) / Math.max(1, this.members.length);
  }

  /**
   * Plans the pacer on the next turn of the event loop, not now: the loops of one deploy all join before the first
   * catch-up goes, so the spacing is that of the whole group.
   */
  private pumpSoon(): void {
    this.stopPacer();
    this.timer = setTimeout(() => this.pump(), 0);
  }

  private pump(): void {
    this.timer = undefined;
    for (;;) {
      const head = this.queue[0];
      if (!head?.waiting) return;
      const now = this.now();
      const due = this.lastFired + this.spacingMs;
      if (due > now) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(due - now));
        return;
      }
      this.queue.shift();
      const { requestedAt, fire } = head.waiting;
      head.waiting = undefined;
      // the next one counts from when this one was due (timers fire late, the rhythm does not drift)
      this.lastFired = Number.isFinite(this.lastFired) ? due : now;
      fire(requestedAt);
    }
  }

  private stopPacer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private rerank(): void {
    this.members.forEach((m, i) => (m.rank = i));
  }
}

function compare(a: Member, b: Member): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return a.seq - b.seq;
}

/** The place of rank `rank` of `size` in a cycle of `cycleMs`: equally spaced, whole ms. */
export function slotOffset(rank: number, size: number, cycleMs: number): number {
  return size <= 0 ? 0 : Math.floor((rank * cycleMs) / size);
}

/** ms from `fromMs` to the next time t ≡ anchor (mod cycle): in [0, cycle), or (0, cycle] when `strictlyAfter`. */
export function untilNext(fromMs: number, anchorMs: number, cycleMs: number, strictlyAfter: boolean): number {
  const r = (((anchorMs - fromMs) % cycleMs) + cycleMs) % cycleMs;
  return r === 0 && strictlyAfter ? cycleMs : r;
}

/** The groups of one process (tests make their own with a fake clock). */
export class PollSchedule {
  private readonly groups = new Map<number, Group>();
  private seq = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Joins the group of `intervalMs` under `key`. */
  join(key: string, intervalMs: number): PollSlot {
    const length = Math.max(1, Math.round(intervalMs));
    let group = this.groups.get(length);
    if (!group) this.groups.set(length, (group = new Group(length, this.now(), this.now)));
    const g = group;
    const member: Member = { key, seq: this.seq++, rank: 0 };
    g.add(member);
    let left = false;
    const phaseMs = (): number => slotOffset(member.rank, g.members.length, length);
    return {
      intervalMs: length,
      phaseMs,
      delayAfter: (startMs) => untilNext(startMs, g.origin + phaseMs(), length, true),
      catchUp: (fire) => {
        if (!left) g.enqueue(member, fire);
      },
      leave: () => {
        if (left) return;
        left = true;
        g.remove(member);
        if (g.members.length === 0 && this.groups.get(length) === g) this.groups.delete(length);
      },
    };
  }

  /** Loops in the group of `intervalMs`. */
  size(intervalMs: number): number {
    return this.groups.get(Math.max(1, Math.round(intervalMs)))?.members.length ?? 0;
  }
}

/** The schedule every poll loop of this Node-RED shares. */
export const pollSchedule = new PollSchedule();
