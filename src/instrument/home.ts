/**
 * Everything this Node-RED knows about one instrument, in one object (DESIGN.md "0.4", one home per instrument): the
 * answer ledgers of its two interfaces, its run-start claims, its audit chains, the answer claims shared with other
 * Node-REDs when it is coordinated, and the stores node folders keep for it (seen errors, run memory, run rules, ...), each in a slot.
 *
 * A node folder's store stays defined in its folder and is held here through `slot()`, so no node folder imports
 * another and this room imports none. The lh-server nodes of the instrument attach to it (homes.ts); the last to
 * leave closes what it holds open.
 */
import { AuditChains } from '../audit';
import {
  AnswerLedger,
  type InstrumentBooks,
  LoginGate,
  type ProtocolApplyLocks,
  RunStartClaims,
  type SharedAnswerClaims,
} from '../client';

/** A store a node folder keeps in each home: `make` builds it the first time a home is asked for it. */
export interface Slot<T> {
  readonly name: string;
  readonly make: () => T;
}

/** Declares a slot (once, at module level of the folder that owns the store). */
export function slot<T>(name: string, make: () => T): Slot<T> {
  return { name, make };
}

/** A slot's store that holds something open (timers, files): closed with the home. */
interface Closable {
  close(): unknown;
}

function isClosable(value: unknown): value is Closable {
  return typeof value === 'object' && value !== null && typeof (value as Closable).close === 'function';
}

/** What the lh-server nodes that joined coordination gave: the newest in use, each withdrawn when its node closes. */
class NewestOf<T> {
  private readonly held: { value: T }[] = [];

  /** `value` is the one in use from now on; the function returned withdraws it (the one before is back in use). */
  use(value: T): () => void {
    const entry = { value };
    this.held.push(entry);
    return () => {
      const at = this.held.indexOf(entry);
      if (at >= 0) this.held.splice(at, 1);
    };
  }

  get current(): T | undefined {
    return this.held[this.held.length - 1]?.value;
  }

  clear(): void {
    this.held.length = 0;
  }
}

export class InstrumentHome implements InstrumentBooks {
  /** Interface A's answers (by error id) and interface B's (by uuid): at most one answer per error from this Node-RED. */
  readonly answersA: AnswerLedger;
  readonly answersB: AnswerLedger;
  /** One run start in flight per instrument. */
  readonly runStarts: RunStartClaims;
  /** One password sent at a time per user, and a rejected one held back for every lh-server node of the instrument. */
  readonly logins = new LoginGate();
  /** The audit chains its lh-server nodes write (a file per URL spelling, or the coordination's Redis stream). */
  readonly audit = new AuditChains();
  private readonly stores = new Map<Slot<unknown>, unknown>();
  /** How many lh-server nodes hold the home (homes.ts attachHome). */
  private holders = 0;
  /** With coordination: the ledger shared with the other Node-REDs, per lh-server node that joined (the newest wins). */
  private readonly claims = new NewestOf<SharedAnswerClaims>();
  /** With coordination: the apply locks shared with the other Node-REDs, per lh-server node that joined (the newest wins). */
  private readonly locks = new NewestOf<ProtocolApplyLocks>();

  /** `identity`: the instrument's key (homes.ts `homeKey`), the same for every spelling of its URL. */
  constructor(
    readonly identity: string,
    now: () => number = Date.now,
  ) {
    this.answersA = new AnswerLedger(now);
    this.answersB = new AnswerLedger(now);
    this.runStarts = new RunStartClaims(now);
  }

  /** How many lh-server nodes hold the home now. */
  get attached(): number {
    return this.holders;
  }

  /** One more lh-server node holds the home (homes.ts). */
  hold(): void {
    this.holders++;
  }

  /** One lh-server node lets go; true when it was the last (homes.ts then closes the home). */
  letGo(): boolean {
    this.holders = Math.max(0, this.holders - 1);
    return this.holders === 0;
  }

  /** The store of that slot in this home, made on first use. */
  slot<T>(which: Slot<T>): T {
    if (!this.stores.has(which)) this.stores.set(which, which.make());
    return this.stores.get(which) as T;
  }

  /** Whether the store of that slot was made (tests, and callers that need not make it to find it empty). */
  has(which: Slot<unknown>): boolean {
    return this.stores.has(which);
  }

  /**
   * Coordination: from now on every answer to this instrument is claimed in `claims` (shared with the other
   * Node-REDs) before this home's ledger and the request. Returns the function that withdraws it.
   */
  useAnswerClaims(claims: SharedAnswerClaims): () => void {
    return this.claims.use(claims);
  }

  /** The shared answer claims, when the instrument is coordinated. */
  get answerClaims(): SharedAnswerClaims | undefined {
    return this.claims.current;
  }

  /**
   * Coordination: from now on every apply of a plan to a protocol of this instrument holds the protocol's lock in
   * `locks` (shared with the other Node-REDs) while it writes. Returns the function that withdraws it.
   */
  useApplyLocks(locks: ProtocolApplyLocks): () => void {
    return this.locks.use(locks);
  }

  /** The shared apply locks, when the instrument is coordinated. */
  get applyLocks(): ProtocolApplyLocks | undefined {
    return this.locks.current;
  }

  /**
   * Closes what the slots hold open (their `close()`), once the last lh-server node left. What the home remembers
   * (answers given, errors seen, run memory) stays for the lh-server nodes a redeploy starts again.
   */
  async close(): Promise<void> {
    this.claims.clear();
    this.locks.clear();
    const closing = [...this.stores.values()].filter(isClosable).map((store) => store.close());
    await Promise.allSettled(closing);
  }
}
