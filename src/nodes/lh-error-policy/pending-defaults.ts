/**
 * The pending defaults of one policy node: what goes out when, kept as plain data so that it can be saved in a
 * context store and restored after a redeploy or a restart of Node-RED. No timers here.
 */
import { homeKey, slot } from '../../instrument';
import { RunScope } from '../runs/run-scope';
import type { ErrorSource } from '../shared/poll-messages';

export interface PendingDefault {
  /** the error's id (A) or uuid (B) */
  key: string;
  source: ErrorSource;
  /** A: the response; B: the action id */
  answer: string;
  /** ms since the epoch */
  deadline: number;
  /** when the policy decided it (ms since the epoch; absent: saved before 0.4.1) */
  decidedAt?: number;
  /** which deadline applies: the rule's delay, or the B error's own timeoutSeconds */
  deadlineBy?: 'rule' | 'instrument';
  /** the rule's position when decided (-1: a run-scoped rule) */
  rule: number;
  /** the rule's id (absent: saved before rule ids, or a run-scoped rule) */
  ruleId?: string;
  /** the instrument (lh-server instrumentKey) it belongs to */
  instrument: string;
  /** the error as lh-error-poll emitted it (its responses or actions) */
  record: Record<string, unknown>;
  /** the step of the rule's ladder (1-based; absent: saved before ladders, step 1) */
  step?: number;
  /** B: input values the step (or the run-scoped rule) gives, by input id */
  inputs?: Record<string, string>;
  /** A: per-item responses (a run-scoped rule chosen on the page) */
  items?: Record<string, string>;
  /** answered by a run-scoped rule a person chose on the answer page */
  runRule?: { by: string | null; at: number; errorKey: string };
  /** the default is being sent: it stays here until the instrument's outcome is known (a redeploy or a restart re-sends it; the answer ledger or the instrument refuses a second answer) */
  inFlight?: boolean;
  /**
   * The outcome of this default's answer, learned by a node instance that a redeploy had closed meanwhile (refused,
   * failed, or not sent because the instrument lists another error or several under the id): the next instance
   * reports it (escalates) and sends nothing again.
   */
  settled?: SettledOutcome;
}

/** An automatic answer's outcome that escalates, as handed over from a closed node instance to the next. */
export interface SettledOutcome {
  outcome: 'refused' | 'failed' | 'changed' | 'ambiguous';
  message: string;
}

export interface PendingSnapshot {
  version: 1;
  pending: PendingDefault[];
}

function isPending(value: unknown): value is PendingDefault {
  if (!value || typeof value !== 'object') return false;
  const p = value as Record<string, unknown>;
  return (
    typeof p.key === 'string' &&
    (p.source === 'A' || p.source === 'B') &&
    typeof p.answer === 'string' &&
    typeof p.deadline === 'number' &&
    typeof p.instrument === 'string' &&
    !!p.record &&
    typeof p.record === 'object'
  );
}

export class PendingBook {
  private readonly byKey = new Map<string, PendingDefault>();

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  get(key: string): PendingDefault | undefined {
    return this.byKey.get(key);
  }

  add(p: PendingDefault): void {
    this.byKey.set(p.key, p);
  }

  /** Removes and returns the pending default of the error (once: a second call returns undefined). */
  take(key: string): PendingDefault | undefined {
    const p = this.byKey.get(key);
    this.byKey.delete(key);
    return p;
  }

  all(): PendingDefault[] {
    return [...this.byKey.values()];
  }

  snapshot(): PendingSnapshot {
    return { version: 1, pending: this.all() };
  }

  /** Merges a saved snapshot: only entries of this instrument (its URL in any spelling), and none already known. */
  restore(saved: unknown, instrument: string): number {
    if (!saved || typeof saved !== 'object') return 0;
    const list = (saved as Partial<PendingSnapshot>).pending;
    if (!Array.isArray(list)) return 0;
    const home = homeKey(instrument);
    let added = 0;
    for (const p of list) {
      if (!isPending(p) || homeKey(p.instrument) !== home || this.byKey.has(p.key)) continue;
      this.byKey.set(p.key, p);
      added++;
    }
    return added;
  }
}

/** A policy node's pending defaults and run scope (ladder counts); `restored`: read back from the context store. */
export interface PolicyBook {
  book: PendingBook;
  restored: boolean;
  scope: RunScope;
}

/**
 * Pending defaults and run scopes by policy node id, in the home of the policy's instrument: they outlive a redeploy
 * there, and a restart through the context store.
 */
export const POLICY_BOOKS = slot('pending-defaults', () => new Map<string, PolicyBook>());

export function newPolicyBook(): PolicyBook {
  return { book: new PendingBook(), restored: false, scope: new RunScope() };
}
