/**
 * One run start in flight per instrument in this Node-RED. Two start msgs that arrive together would otherwise both
 * read "Idle" and both send a create (the second failing with the instrument's 409 after it was sent): the second
 * is refused here, before anything is sent, with an error of kind `busy`. One claim book per instrument, in its home
 * (src/instrument), shared by every client (so by every lh-server node pointing at the same instrument).
 */
import { LhError } from './errors';

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
}

export class RunStartClaims {
  private held?: RunStartClaim & { token: object };
  private loading?: LeftAtLoading;

  constructor(private readonly now: () => number = Date.now) {}

  /** The start in flight, if any. */
  current(): RunStartClaim | undefined {
    return this.held ? { what: this.held.what, since: this.held.since } : undefined;
  }

  /** Remembers the run this Node-RED left at Loading (replacing any earlier one). */
  leftAtLoading(protocolId: number, runId?: string): void {
    this.loading = { protocolId, runId, since: this.now() };
  }

  /** The run this Node-RED left at Loading, if it did and nothing has confirmed or replaced it since. */
  atLoading(): LeftAtLoading | undefined {
    return this.loading ? { ...this.loading } : undefined;
  }

  /** Forgets the run left at Loading (confirmed, gone from Loading, or replaced by a new start). */
  forgetLoading(): void {
    this.loading = undefined;
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
    return {
      release: () => {
        if (this.held?.token === token) this.held = undefined;
      },
    };
  }
}
