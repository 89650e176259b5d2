/**
 * One run start in flight per instrument in this Node-RED. Two start msgs that arrive together would otherwise both
 * read "Idle" and both send a create (the second failing with the instrument's 409 after it was sent): the second
 * is refused here, before anything is sent, with an error of kind `busy`. One claim book per instrument, in its home
 * (src/instrument), shared by every client (so by every lh-server node pointing at the same instrument).
 */
import { LhError } from './errors';
import type { RunStateName } from './run-state';
import { steadyNow } from './wall-clock';

/**
 * States in which a run left at Loading may still be the one waiting there (an error handling or a reload while it
 * waits); any other state (Idle, a run being scheduled, running, aborting) shows that it left Loading.
 */
const STILL_AT_LOADING: readonly RunStateName[] = ['Loading', 'ErrorHandling', 'Reloading'];

export interface RunStartClaim {
  /** what the start is doing (a protocol, "confirm loading"), for the refusal of a second start */
  what: string;
  /** when the claim was taken (ms since the epoch) */
  since: number;
}

/** The run this Node-RED left waiting at Loading (a start with Stop at loading), for a later msg.confirmLoading. */
export interface LeftAtLoading {
  protocolId: number;
  /** the run id of the create answer, when it gave one */
  runId?: string;
  /** when it was left there (ms since the epoch) */
  since: number;
}

/** A claim held by one start: release it when the start returns or fails (releasing twice is harmless). */
export interface HeldClaim {
  release(): void;
  /** The create goes out now (call it just before sending): when a hold, if any, counts from. */
  sendingCreate(): void;
  /**
   * The create this start sent got no answer (the connection closed or was lost, the deadline passed): the
   * instrument may still be creating that run, and shows Idle until it has. No other start sends a create until a
   * status read started after it shows a run, or until `holdMs` after it was sent (refuseWhileCreateUnanswered).
   * Both on the steady clock: a step of the wall clock since the send neither stretches the hold nor ends it, nor
   * makes a read started before the send count as one after it, or the other way round.
   */
  createUnanswered(holdMs: number): void;
  /**
   * Throws `busy` while an earlier create got no answer and no status read since showed its run (call it after a
   * status read that showed the instrument Idle: a run that shows is refused by name instead).
   */
  refuseWhileCreateUnanswered(): void;
}

export class RunStartClaims {
  private held?: RunStartClaim & { token: object };
  /**
   * a create that got no answer: its run may still appear; no other start until it shows or `until`, on the steady
   * clock: the wall clock set back (NTP, a VM resumed) after the hold ran out, before anyone looked, revived it for
   * another hold, and set back before then it would have held for the step's length
   */
  private unanswered?: RunStartClaim & { until: number; sentSteady: number };
  /** the steady clock (monotonic), for the hold: what `now` was injected as unless given apart */
  private readonly steady: () => number;
  private loading?: LeftAtLoading;
  /**
   * The order of events (the run left at Loading, status reads started): "started after" by this count, not by the
   * wall clock, which a step back (NTP, a VM resumed) would turn around for the step's length, so that no read
   * forgot the run left at Loading and a run an operator prepares there meanwhile was confirmed as this Node-RED's.
   */
  private events = 0;
  private loadingAt = 0;

  /**
   * `now`: the wall clock (the times a claim names); `steady`: a clock no step moves, for how long a hold lasts
   * (performance's by default; a clock a test injects as `now` stands for both unless `steady` is given too).
   */
  constructor(
    private readonly now: () => number = Date.now,
    steady?: () => number,
  ) {
    this.steady = steady ?? (now === Date.now ? steadyNow : now);
  }

  /** The start in flight, if any. */
  current(): RunStartClaim | undefined {
    if (this.held) return { what: this.held.what, since: this.held.since };
    const unanswered = this.pendingCreate();
    return unanswered ? { what: unanswered.what, since: unanswered.since } : undefined;
  }

  /** The create that got no answer, while its run may still appear. */
  private pendingCreate(): (RunStartClaim & { until: number; sentSteady: number }) | undefined {
    // timed on the steady clock: a step of the wall clock neither holds it for the step's length nor ends it at once
    if (this.unanswered && this.steady() >= this.unanswered.until) this.unanswered = undefined;
    return this.unanswered;
  }

  /** Remembers the run this Node-RED left at Loading (replacing any earlier one). */
  leftAtLoading(protocolId: number, runId?: string): void {
    this.loading = { protocolId, runId, since: this.now() };
    this.loadingAt = ++this.events;
  }

  /** The run this Node-RED left at Loading, if it did and nothing has confirmed or replaced it since. */
  atLoading(): LeftAtLoading | undefined {
    return this.loading ? { ...this.loading } : undefined;
  }

  /** Forgets the run left at Loading (confirmed, gone from Loading, or replaced by a new start). */
  forgetLoading(): void {
    this.loading = undefined;
  }

  /**
   * A status read of the instrument starts (any of this Node-RED: a run watch's poll, a status operation, a start's
   * wait): call what it returns with the state it shows. A read started after the run was left at Loading that shows
   * another state than Loading (Idle, a run being scheduled, running, aborting) saw that run leave: it is forgotten,
   * so a run an operator prepares at the instrument afterwards is not confirmed as this Node-RED's. A read started
   * before (its answer may be older than the run left there) tells nothing about it.
   */
  readingStatus(): (state: RunStateName) => void {
    const startedAt = this.steady();
    const order = ++this.events;
    return (state) => {
      if (this.loading && order > this.loadingAt && !STILL_AT_LOADING.includes(state)) this.loading = undefined;
      // the run of a create that got no answer shows: from now on the busy check of a start names it
      if (this.unanswered && startedAt > this.unanswered.sentSteady && state !== 'Idle') this.unanswered = undefined;
    };
  }

  /** Takes the instrument's start slot, or throws `busy` naming the start in flight. */
  claim(what: string, operation: string): HeldClaim {
    const held = this.held;
    if (held) {
      const seconds = Math.max(0, Math.round((this.now() - held.since) / 1000));
      throw new LhError(
        `start refused: another start on this instrument is in progress (${held.what}, for ${seconds} s); nothing was sent`,
        { kind: 'busy', operation, statusCode: 409, body: { startInProgress: held.what } },
      );
    }
    const token = {};
    this.held = { what, since: this.now(), token };
    let sent: { at: number; steady: number } | undefined;
    return {
      release: () => {
        if (this.held?.token === token) this.held = undefined;
      },
      refuseWhileCreateUnanswered: () => {
        const pending = this.pendingCreate();
        if (!pending) return;
        const ago = Math.max(0, Math.round((this.now() - pending.since) / 1000));
        const left = Math.max(1, Math.round((pending.until - this.steady()) / 1000));
        throw new LhError(
          `start refused: a create sent ${ago} s ago (${pending.what}) got no answer, and the instrument may still be ` +
            `creating that run; nothing was sent (wait until the instrument shows it, at most ${left} s)`,
          { kind: 'busy', operation, statusCode: 409, body: { startInProgress: pending.what } },
        );
      },
      sendingCreate: () => {
        sent = { at: this.now(), steady: this.steady() };
      },
      createUnanswered: (holdMs) => {
        const from = sent ?? { at: this.now(), steady: this.steady() };
        this.unanswered = { what, since: from.at, until: from.steady + holdMs, sentSteady: from.steady };
      },
    };
  }
}
