/**
 * One lh-error-policy node at run time (issue 30 point 3: `register` wires, this class behaves): the book of pending
 * defaults and their timers, the ladders' run scope, sending a default when it falls due (and waiting for another
 * answer in flight), and, with coordination, the shared schedule that lets exactly one replica send each default.
 * Decisions are pure (decision.ts, rules.ts, policy-msgs.ts); what is said to the user is in the locale files.
 */
import {
  fingerprint,
  identityOf,
  type InstrumentError,
  LhError,
  type LiquidHandlerClient,
  type PendingError,
  sameError,
  steadyNow,
  withinSpan,
} from '../../client';
import type { CoordinatedDefaults } from '../../coordination/policy-defaults';
import { homeKey, homeOf } from '../../instrument';
import { answerA, answerB, answerEvents, type AnswerOutcome, instrumentKeyOf, lookupAnswer } from '../answering/answer-error';
import { asAutomatic } from '../answering/automatic';
import { errorInMsg } from '../answering/error-in-msg';
import {
  instrumentOf,
  isOwnInstrument,
  isOwnRun,
  policyApplies,
  runRuleEvents,
  runRuleFor,
  runRulesOf,
  type RunScope,
  runSighting,
} from '../runs/run-scope';
import { asNodeActor } from '../shared/audit';
import { type InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import type { ErrorSource } from '../shared/poll-messages';
import { type LhServerNode, requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { zonedTime } from '../shared/zoned-time';
import { answerLabel, decide, type Decision } from './decision';
import {
  newPolicyBook,
  type PendingBook,
  type PendingDefault,
  POLICY_BOOKS,
  type PolicyBook,
  type SettledOutcome,
} from './pending-defaults';
import { defaultAuditMsg, heldDecision, pendingOf, policyOf, runRuleDecision, staleDefault } from './policy-msgs';
import { type CompiledRule, compileRules, legacyRuleSignature, matchRule, ruleSignature, stepAt } from './rules';

const CONTEXT_KEY = 'lhErrorPolicy';
const MAX_TIMER_MS = 2 ** 31 - 1;
const OP = 'error-policy';
const IN_FLIGHT_RECHECK_MS = 1000;
/** How often the holder looks for defaults that fell due while their holder was down. */
const COORDINATED_SWEEP_MS = 1000;
/** Coordinated: errors whose default this node finished, remembered at most. */
const FINISHED_KEPT = 1000;
/** Instruments whose run-watch msgs were ignored, logged at most. */
const IGNORED_RUNS_LOGGED = 20;
/** Pending defaults cancelled at a deploy, named in its log line at most. */
const STALE_LOGGED = 10;

type Send = (msgs: (NodeMessage | null)[]) => void;
type Found = { source: ErrorSource; key: string; record: Record<string, unknown> };

/** Whether two records are the same error (an id the instrument reused names another one). */
function sameRecord(a: unknown, b: unknown): boolean {
  const x = identityOf(a);
  const y = identityOf(b);
  return !x || !y || sameError(x, y);
}

/** Keys of a value saved in the context store: the coordinated defaults only this replica had (see CoordinatedDefaults.mine). */
function keysIn(value: unknown): string[] {
  const mine = value && typeof value === 'object' ? (value as { mine?: unknown }).mine : undefined;
  return Array.isArray(mine) ? mine.filter((k): k is string => typeof k === 'string') : [];
}

function configText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export class ErrorPolicyNode {
  private readonly status: Status;
  private readonly store?: string;
  private readonly by: string;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;
  private readonly setupError?: LhError;
  private readonly rules: CompiledRule[] = [];
  private readonly server?: LhServerNode;
  private readonly client?: LiquidHandlerClient;
  /** this policy's instrument as run-watch msgs name it: run-watch msgs of other instruments count nothing here */
  private readonly own?: InstrumentInfo;
  private readonly instrument: string;
  /** several Node-REDs (lh-coordination): each default is sent by one replica, a new holder sends those due */
  private readonly coordinated?: CoordinatedDefaults<PendingDefault>;
  private readonly book: PendingBook;
  /** The policy books of its instrument's home, where this node's is kept by its id. */
  private readonly books: Map<string, PolicyBook>;
  private readonly scope: RunScope;
  private saveQueued = false;
  /**
   * Coordinated: the errors whose default this node finished (sent, escalated, cancelled), by key. A copy of such a
   * default that another replica hands over later (it notified the error while Redis was lost) is not sent again.
   */
  private readonly finished = new Map<string, Record<string, unknown>>();
  /** Instruments whose run-watch msgs this policy ignored (logged once each, bounded): a spelling that differs shows. */
  private readonly ignoredRuns = new Set<string>();
  /** Instruments whose errors this policy only passed on (logged once each, bounded): a wiring to correct. */
  private readonly ignoredErrors = new Set<string>();
  private readonly withdraw?: () => void;
  /** when this instance started (its deploy): what other replicas decided before it, under rules it removed, is stale */
  private readonly deployedAt = Date.now();
  private readonly sweep?: NodeJS.Timeout;

  constructor(
    private readonly RED: Red,
    private readonly node: Node,
    config: NodeConfig,
    /** per policy node id: the coordinated defaults only this replica had when its node closed (a redeploy) */
    private readonly keptOverRedeploy: Map<string, string[]>,
  ) {
    this.status = new Status(node, RED);
    this.store = configText(config.store);
    this.by = configText(config.by) ?? 'policy';
    try {
      this.rules = compileRules(config.rules);
      ({ server: this.server, client: this.client } = requireClient(RED, config.server, node.type));
      this.own = instrumentInfo(this.server, this.client);
      this.status.follow(this.server.connection);
    } catch (err) {
      this.setupError = err instanceof LhError ? err : new LhError(String(err), { kind: 'config', operation: OP });
      this.status.failed(this.setupError);
      node.error(this.setupError.message);
    }
    this.instrument = this.server?.instrumentKey ?? '';
    const server = this.server;
    this.coordinated =
      server?.coordinator && server.coordination
        ? server.coordinator.defaults<PendingDefault>(this.instrument, node.id)
        : undefined;

    // kept in the instrument's home over a redeploy (a policy without a valid server keeps nothing)
    const books = this.server ? homeOf(this.instrument).slot(POLICY_BOOKS) : new Map<string, PolicyBook>();
    let entry = books.get(node.id);
    if (!entry) books.set(node.id, (entry = newPolicyBook()));
    this.books = books;
    this.book = entry.book;
    this.scope = entry.scope;

    answerEvents.on('answered', this.onAnswered);
    this.withdraw = this.setupError ? undefined : policyApplies(this.instrument, node.id);
    runRuleEvents.on('added', this.onRunRule);
    // the holder's sweep: defaults due that no replica sent (their holder died) are sent here, once
    if (this.coordinated) this.sweep = setInterval(() => void this.sweepDue(), COORDINATED_SWEEP_MS);

    if (!this.setupError) {
      if (entry.restored) this.startPending(keptOverRedeploy.get(node.id));
      else {
        entry.restored = true;
        node.context().get(CONTEXT_KEY, this.store, (err, value) => {
          if (err) node.warn(RED._('lh-error-policy.errors.persist', { message: err.message }));
          else {
            if (value && typeof value === 'object')
              this.scope.restore((value as { scope?: unknown }).scope, {
                steady: steadyNow(),
                wall: Date.now(),
              });
            if (this.book.restore(value, this.instrument) > 0) this.save();
          }
          if (!this.closed) this.startPending(err ? [] : keysIn(value));
        });
      }
    }
  }

  // ---- persistence and status

  private writeNow(): void {
    this.saveQueued = false;
    const mine = this.coordinated ? { mine: this.coordinated.mine() } : {};
    this.node
      .context()
      .set(
        CONTEXT_KEY,
        { ...this.book.snapshot(), scope: this.scope.snapshot({ steady: steadyNow(), wall: Date.now() }), ...mine },
        this.store,
        (err) => {
          if (err) this.node.warn(this.RED._('lh-error-policy.errors.persist', { message: err.message }));
        },
      );
  }

  /** One write per burst of changes (a snapshot costs O(pending)); close() writes what is still queued. */
  private save(): void {
    if (this.saveQueued) return;
    this.saveQueued = true;
    setImmediate(() => {
      if (this.saveQueued) this.writeNow();
    });
  }

  private showStatus(): void {
    if (this.setupError) return;
    const now = steadyNow(); // the run scope's clock (run-scope.ts)
    const runRules = runRulesOf(this.instrument, this.scope.current(now).since).length;
    const where = this.scope.current(now).kind;
    if (runRules > 0) this.status.warn('lh-error-policy.status.runRules', { count: this.book.size, rules: runRules, where });
    else if (this.book.size > 0) this.status.warn('lh-error-policy.status.pending', { count: this.book.size });
    else this.status.ok('lh-error-policy.status.idle');
  }

  // ---- the book of pending defaults

  private schedule(p: PendingDefault): void {
    const old = this.timers.get(p.key);
    if (old) clearTimeout(old);
    const now = Date.now();
    // a deadline further ahead than the default's span (the wall clock set back since it was decided: an NTP step, a
    // VM resumed, a restart or redeploy after either) counts the span afresh: never the step's length
    const left = withinSpan(p.deadline, now, Math.max(0, p.deadline - (p.decidedAt ?? now))) - now;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, left));
    this.timers.set(
      p.key,
      setTimeout(() => {
        this.timers.delete(p.key);
        // The timer measured the wait (monotonic): the deadline is reached whatever the wall clock says now. Asked
        // again, a clock set back meanwhile (an NTP step, a VM resumed) would hold the default for the step's length
        // (an hour back: the instrument waiting an hour longer than the person was told).
        if (left > MAX_TIMER_MS && p.deadline > Date.now())
          this.schedule(p); // a deadline beyond the longest timer
        else void this.fire(p.key);
      }, wait),
    );
  }

  private cancel(key: string): PendingDefault | undefined {
    if (this.coordinated) void this.coordinated.cancel(key);
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
    const p = this.book.take(key);
    if (p) this.save();
    if (p) this.finish(key, p.record);
    return p;
  }

  private finish(key: string, record: Record<string, unknown>): void {
    if (!this.coordinated) return;
    this.finished.delete(key);
    this.finished.set(key, record);
    if (this.finished.size > FINISHED_KEPT) this.finished.delete(this.finished.keys().next().value as string);
  }

  /** Whether a default handed over to this replica's sweep is one this node finished already (the same error). */
  private finishedHere(p: PendingDefault): boolean {
    const record = this.finished.get(p.key);
    if (record === undefined) return false;
    // the same error, surely (unsure: sent, and the answer ledger or the instrument has the last word)
    const [x, y] = [identityOf(record), identityOf(p.record)];
    return x && y ? sameError(x, y) : JSON.stringify(record) === JSON.stringify(p.record);
  }

  /** Adds a default to the book (and, coordinated, to the shared schedule: what a restart keeps is saved after). */
  private addPending(p: PendingDefault, lost: boolean): void {
    this.book.add(p);
    this.save();
    if (this.coordinated)
      void this.coordinated.add(p, { lost }).then(() => {
        if (!this.closed) this.save(); // what a restart keeps (mine)
      });
  }

  private startPending(kept: string[] = []): void {
    // coordinated: a default only this replica had before the redeploy or restart is still its own to send or hand over
    for (const key of kept) if (this.coordinated && this.book.get(key)) this.coordinated.keep(key);
    this.dropStale(this.book.all().filter((p) => homeKey(p.instrument) === homeKey(this.instrument)));
    // every spelling of the instrument's URL is one instrument: a redeploy that respelled it keeps its defaults
    for (const p of this.book.all()) if (homeKey(p.instrument) === homeKey(this.instrument)) this.schedule(p);
    this.showStatus();
  }

  /**
   * At deploy (and start): a pending default decided by a rule this deploy removed or changed so that it no longer
   * answers the error so (see staleDefault) is cancelled, and the log says so once. One being sent (or whose outcome
   * a closed instance handed over) is left to its outcome. Returns the keys cancelled.
   */
  private dropStale(pending: PendingDefault[]): Set<string> {
    const dropped = new Map<string, string>();
    for (const p of pending) {
      if (p.inFlight || p.settled) continue;
      const why = staleDefault(p, this.rules);
      if (why === undefined) continue;
      if (this.book.get(p.key) === p) this.cancel(p.key);
      else if (this.coordinated) void this.coordinated.cancel(p.key);
      dropped.set(p.key, why);
    }
    if (dropped.size > 0) {
      const shown = [...dropped].slice(0, STALE_LOGGED).map(([key, why]) => `${key} (${why})`);
      const more = dropped.size > STALE_LOGGED ? `, and ${dropped.size - STALE_LOGGED} more` : '';
      this.node.warn(this.RED._('lh-error-policy.log.staleDefaults', { count: dropped.size, errors: shown.join(', ') + more }));
    }
    return new Set(dropped.keys());
  }

  private async sweepDue(): Promise<void> {
    const coordinated = this.coordinated;
    if (!coordinated) return;
    // a default this node's own timer will send is left to it (on time by the monotonic clock, whatever a step of the
    // wall clock made of Date.now(): a step forward would have the sweep answer it before its deadline)
    const due = (await coordinated.due(Date.now(), this.timers.keys())).filter(
      (p) => homeKey(p.instrument) === homeKey(this.instrument),
    );
    // a default another replica decided before this deploy, under a rule this deploy removed or changed, is not sent
    // either; one decided since may come from a replica whose flows are newer than this one's (a rolling deploy): kept
    const before = (p: PendingDefault): boolean => p.decidedAt !== undefined && p.decidedAt < this.deployedAt;
    const stale = this.closed ? new Set<string>() : this.dropStale(due.filter((p) => !this.book.get(p.key) && before(p)));
    for (const p of due) {
      if (this.closed || stale.has(p.key)) {
        if (stale.has(p.key)) coordinated.done(p.key);
        continue;
      }
      if (this.finishedHere(p) && !this.book.get(p.key)) {
        coordinated.done(p.key);
        this.node.debug(
          `error-policy: the default of error ${p.key} was handed over after this node finished it: not sent again`,
        );
        continue;
      }
      this.book.add(p);
      this.save();
      void this.fire(p.key);
    }
  }

  // ---- sending a default

  private send(p: PendingDefault): Promise<AnswerOutcome> {
    const { client, server, by } = this;
    if (!client || !server)
      return Promise.resolve({
        outcome: 'failed',
        message: 'no instrument',
        error: new LhError('no instrument', { kind: 'config', operation: OP }),
      });
    const field = p.runRule ? 'inputs' : `rules[${p.rule}].steps[${(p.step ?? 1) - 1}].inputs`;
    // the audit trail records this policy node as the actor of the default it sends
    // automatic: with coordination, claimed under the lease (a replica that lost the instrument sends nothing)
    return asNodeActor(this.node, undefined, () =>
      asAutomatic(() =>
        p.source === 'A'
          ? answerA(client, p.record as PendingError, p.answer, by, identityOf(p.record), p.items)
          : answerB(client, p.record as InstrumentError, Number(p.answer), server.clientKey || null, by, identityOf(p.record), {
              values: p.inputs ?? {},
              useDefaults: true,
              field,
            }),
      ),
    );
  }

  private report(p: PendingDefault, outcome: AnswerOutcome): void {
    const msg = defaultAuditMsg(p, outcome, this.by);
    switch (outcome.outcome) {
      case 'answered':
        this.node.send([null, msg, null]);
        break;
      case 'already-answered': {
        const err = new LhError(outcome.message, { kind: 'already-answered', operation: OP, body: outcome.previous });
        msg.error = err.toMsgError();
        this.node.error(err, msg);
        break;
      }
      case 'not-pending':
        this.node.debug(outcome.message);
        break;
      default:
        this.node.send([null, null, msg]);
    }
    this.showStatus();
  }

  /** Someone's answer is in flight: the default waits for it (a refused answer must not cancel the default). */
  private waitForOther(p: PendingDefault): void {
    const { inFlight: _sending, ...waiting } = p;
    const again: PendingDefault = { ...waiting, deadline: Date.now() + IN_FLIGHT_RECHECK_MS };
    this.book.add(again);
    this.save();
    // coordinated: a default taken from the shared schedule goes back there while it waits (a new holder sends it)
    if (this.coordinated) void this.coordinated.requeue(again);
    this.schedule(again);
  }

  /**
   * Sends the default. Its book entry stays, marked in flight, until the outcome is known: a redeploy or a crash
   * meanwhile leaves it for the next instance (the answer ledger and the instrument refuse a second answer).
   */
  private async fire(key: string): Promise<void> {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
    const p = this.book.get(key);
    const { client, coordinated } = this;
    if (!p || !client) return;
    // sent by the instance before a redeploy, which learned the outcome after it closed: reported here, not sent again
    if (p.settled) return this.reportSettled(key, p, p.settled);
    const given = lookupAnswer(client, key, identityOf(p.record));
    if (given?.outcome === 'answered') {
      this.cancel(key);
      return this.showStatus(); // someone answered first: the default is not sent
    }
    if (given) return this.waitForOther(p);
    if (coordinated) {
      const verdict = await coordinated.take(key, p);
      if (this.closed) return;
      if (verdict === 'later') return this.waitForOther(p); // Redis unreachable: no automatic answer until it is back
      if (verdict === 'drop') {
        // another replica sends it (it holds the instrument now), or it was cancelled there
        this.timers.delete(key);
        if (this.book.take(key)) this.save();
        return this.showStatus();
      }
    }
    this.book.add({ ...p, inFlight: true });
    this.save();
    const outcome = await this.send(p);
    if (outcome.outcome === 'failed' && outcome.fenced && coordinated) {
      // another replica holds the instrument now: nothing was sent, the default goes back for it to send (once);
      // when Redis does not take it, this replica keeps it and hands it over at its next look
      if (!(await coordinated.giveBack(p))) return this.closed ? undefined : this.waitForOther(p);
      this.timers.delete(key);
      if (this.book.take(key)) this.save();
      return this.showStatus();
    }
    this.afterSend(key, p, outcome);
  }

  /** What a default's outcome leaves: the book entry over or waiting again, and the msg that reports it. */
  private afterSend(key: string, p: PendingDefault, outcome: AnswerOutcome): void {
    const over =
      outcome.outcome === 'answered' ||
      outcome.outcome === 'not-pending' ||
      (outcome.outcome === 'already-answered' && !outcome.inFlight);
    // another error raised under the id meanwhile (a reused id, or two errors listed under one) keeps its own default
    const held = this.book.get(key);
    const mine = !held || sameRecord(held.record, p.record);
    if (this.closed && !over) return this.handOver(held, mine, outcome);
    if (over) {
      if (mine) this.cancel(key);
    } else if (outcome.outcome === 'already-answered') return this.waitForOther(p);
    else if (mine) this.cancel(key); // refused or failed (or ambiguous): escalated, a person must act
    if (this.closed && outcome.outcome !== 'answered') return;
    if (this.coordinated && this.answeredByThisPolicy(p, outcome)) {
      // a copy of this default handed over by another replica (or swept after a failover) found the error answered
      // already by this very default on some replica: nothing was sent, and nothing is wrong
      this.node.debug(outcome.message);
      return this.showStatus();
    }
    this.report(p, outcome);
  }

  /**
   * Closed by a redeploy while the default's answer was out: a refused or failed outcome (or one not sent because the
   * instrument lists another error under the id) stays in the book, which the next instance of this node shares, for
   * it to report; it sends nothing again. An answer still in flight elsewhere stays in flight (the next instance
   * waits for it through the answer ledger).
   */
  private handOver(held: PendingDefault | undefined, mine: boolean, outcome: AnswerOutcome): void {
    if (!held || !mine || outcome.outcome === 'answered' || outcome.outcome === 'not-pending') return;
    if (outcome.outcome === 'already-answered') return; // another answer in flight: the next instance waits for it
    // the redeploy closed the lh-server's client too and cut the answer: not the instrument's outcome, the default stays
    // in flight and the next instance sends it again (the answer ledger or the instrument refuses a second answer)
    if (outcome.outcome === 'failed' && this.client?.closed === true) return;
    const { inFlight: _sent, ...rest } = held;
    this.book.add({ ...rest, settled: { outcome: outcome.outcome, message: outcome.message } });
  }

  /** Reports the outcome a closed instance of this node learned for the default (see handOver): escalated, once. */
  private reportSettled(key: string, p: PendingDefault, settled: SettledOutcome): void {
    this.cancel(key);
    const error = new LhError(settled.message, { kind: settled.outcome === 'failed' ? 'network' : 'instrument', operation: OP });
    const outcome: AnswerOutcome =
      settled.outcome === 'changed'
        ? { outcome: 'changed', message: settled.message, error, current: {} }
        : settled.outcome === 'ambiguous'
          ? { outcome: 'ambiguous', message: settled.message, error, listed: [] }
          : { outcome: settled.outcome, message: settled.message, error };
    this.report(p, outcome);
  }

  /** Whether an answer refused as given already is this policy's own default (the same answer, by the same name), settled. */
  private answeredByThisPolicy(
    p: PendingDefault,
    outcome: AnswerOutcome,
  ): outcome is Extract<AnswerOutcome, { outcome: 'already-answered' }> {
    if (outcome.outcome !== 'already-answered' || outcome.inFlight || !outcome.previous) return false;
    const previous = outcome.previous;
    if (previous.outcome !== 'answered' || previous.by !== this.by) return false;
    return p.source === 'B' ? Number(previous.response) === Number(p.answer) : previous.response === p.answer;
  }

  private readonly onAnswered = (where: string, key: string): void => {
    const pending = this.book.get(key);
    const client = this.client;
    // an answer through another lh-server node of the instrument (its URL spelled otherwise) is an answer to it too
    const ours = client !== undefined && homeKey(where) === homeKey(instrumentKeyOf(client));
    if (client && pending && ours && lookupAnswer(client, key, identityOf(pending.record))) {
      this.cancel(key);
      this.showStatus();
    }
  };

  /** a person chose a run-scoped answer on the page: the status shows it */
  private readonly onRunRule = (where: string): void => {
    if (homeKey(where) === homeKey(this.instrument)) this.showStatus();
  };

  // ---- ladders

  /** The key of an error among a ladder's counts: its id and what the instrument says of it. */
  private static ladderErrorId(found: Found): string {
    const seen = identityOf(found.record);
    return seen ? `${found.key}|${fingerprint(seen)}` : found.key;
  }

  /** The ladder key of a rule, taking over counts 0.3 kept under the rule's position (once, at the first match). */
  private ladderKey(rule: CompiledRule): string {
    const key = ruleSignature(rule);
    this.scope.adopt(legacyRuleSignature(rule), key);
    return key;
  }

  /**
   * Whether the lab's own rules send this error to a person: the first matching rule gives it a manual step (it
   * notifies or escalates). A person's "the same for similar errors" never overrides that. Records nothing.
   */
  private labSendsToPerson(found: Found): boolean {
    const rule = matchRule(this.rules, found.source, found.record);
    if (!rule) return false;
    const occurrence = this.scope.peek(this.ladderKey(rule), ErrorPolicyNode.ladderErrorId(found), steadyNow());
    return stepAt(rule, occurrence).step.mode === 'manual';
  }

  /** The step of the matched rule's ladder for this error: its occurrence among the rule's matches in this run. */
  private ladderDecision(found: Found): Decision {
    const now = Date.now();
    const rule = matchRule(this.rules, found.source, found.record);
    if (!rule) return decide(undefined, found.source, found.record, now);
    // counted in the run scope by the steady clock; the deadline is the wall clock's (a person reads it)
    const occurrence = this.scope.occurrence(this.ladderKey(rule), ErrorPolicyNode.ladderErrorId(found), steadyNow());
    this.save();
    return decide(rule, found.source, found.record, now, occurrence);
  }

  // ---- input

  /** A msg on the input: a run-watch msg (counts), an error raised or resolved (decides), anything else passes. */
  input(msg: NodeMessage, send: Send, done: (err?: Error) => void): void {
    if (this.setupError) return done(this.setupError);
    const run = runSighting(msg);
    if (run) {
      // a message of lh-run-watch: the run the ladders count in (not passed on); another instrument's run is not ours
      if (this.own && !isOwnRun(run, this.own)) this.ignoredRunOf(run.instrument?.baseUrl ?? '');
      else if (this.scope.sighting(run, steadyNow())) this.save();
      this.showStatus();
      return done();
    }
    const found = errorInMsg(msg);
    if (!found || (msg.event !== 'raised' && msg.event !== 'resolved')) {
      send([msg, null, null]);
      return done();
    }
    // an error of another instrument (its error poll wired here too): this policy cannot answer it (its answers go to
    // its own instrument, where the id may name another error), nor count it, nor cancel a default for it; a person
    // is told, as of an error no rule matches
    const theirs = instrumentOf(msg);
    if (this.own && theirs && !isOwnInstrument(theirs, this.own)) {
      if (msg.event === 'raised') msg.policy = { mode: 'manual', rule: null, otherInstrument: theirs.baseUrl };
      this.ignoredErrorsOf(theirs.baseUrl);
      send([msg, null, null]);
      return done();
    }
    if (msg.event === 'resolved') {
      this.resolved(msg, found);
      this.showStatus();
      send([msg, null, null]);
      return done();
    }
    // sent by this replica without coordination (Redis unreachable): its default is this replica's to hand on
    this.raised(msg, found, msg.coordination === 'lost', send);
    this.showStatus();
    done();
  }

  private ignoredRunOf(baseUrl: string): void {
    if (this.ignoredRuns.has(baseUrl) || this.ignoredRuns.size >= IGNORED_RUNS_LOGGED) return;
    this.ignoredRuns.add(baseUrl);
    this.node.log(this.RED._('lh-error-policy.log.otherRun', { instrument: baseUrl, own: this.own?.baseUrl ?? '' }));
  }

  /**
   * An error raised while coordination is lost (Redis unreachable) that the policy would answer at once (walk-away, a
   * person's "the same for similar errors"): no automatic answer goes out until Redis is back, and such an error is
   * never notified otherwise, so a person is told now (the answer still goes out then, unless someone answered first).
   */
  private notifyWhileLost(msg: NodeMessage, found: Found, answer: string, policy: Record<string, unknown>, send: Send): void {
    const label = answerLabel(found.source, found.record, answer);
    msg.policy = { ...policy, answer, label, coordination: 'lost' };
    if (typeof msg.notification === 'string')
      msg.notification = `${msg.notification}\nCoordination is lost: the policy answers ${label} only once Redis is back, unless someone answers first`;
    send([msg, null, null]);
  }

  private ignoredErrorsOf(baseUrl: string): void {
    if (this.ignoredErrors.has(baseUrl) || this.ignoredErrors.size >= IGNORED_RUNS_LOGGED) return;
    this.ignoredErrors.add(baseUrl);
    this.node.warn(this.RED._('lh-error-policy.log.otherErrors', { instrument: baseUrl, own: this.own?.baseUrl ?? '' }));
  }

  private resolved(msg: NodeMessage, found: Found): void {
    const held = this.book.get(found.key);
    const heldSame = held !== undefined && sameRecord(held.record, found.record);
    const p = heldSame ? this.cancel(found.key) : undefined; // a resolution of an earlier error under the id leaves this default
    if (p) msg.policy = { cancelled: true, rule: p.rule >= 0 ? p.rule + 1 : null };
    // coordinated, an error this node held no default for (raised by a replica while Redis was lost): a copy of
    // its default that replica hands over later is not sent
    else if (!held) this.finish(found.key, found.record);
  }

  private raised(msg: NodeMessage, found: Found, lost: boolean, send: Send): void {
    const held = this.book.get(found.key);
    // the instrument reused the id: a default held for the error that had it before is over
    if (held && !sameRecord(held.record, found.record)) this.cancel(found.key);
    const existing = this.book.get(found.key);
    // a person's "the same for similar errors" answers only where the lab's own rules do not send the error to a person
    const runRule =
      existing || this.labSendsToPerson(found)
        ? undefined
        : runRuleFor(this.instrument, this.scope.current(steadyNow()).since, found.source, found.record);
    if (runRule) {
      // a person chose on the answer page: "the same for similar errors until this run ends"
      const { p, policy } = runRuleDecision(runRule, Date.now());
      msg.policy = policy;
      if (lost) this.notifyWhileLost(msg, found, p.answer, policy, send);
      // through the book and, coordinated, the shared schedule (as a walk-away answer): a default taken from a schedule
      // that never had it was dropped, so one chosen while Redis was lost never went out once it was back
      this.addPending({ ...p, key: found.key, source: found.source, instrument: this.instrument, record: found.record }, lost);
      void this.fire(found.key);
      return;
    }
    const decision: Decision = existing ? heldDecision(existing, this.rules) : this.ladderDecision(found);
    const policy = policyOf(decision, this.scope.current(steadyNow()));
    switch (decision.kind) {
      case 'notify':
        msg.policy = policy;
        send([msg, null, null]);
        break;
      case 'schedule': {
        const label = answerLabel(found.source, found.record, decision.answer);
        const inputs = decision.rung.step.inputs;
        msg.policy = {
          ...policy,
          answer: decision.answer,
          label,
          ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
          deadline: new Date(decision.deadline).toISOString(),
          deadlineBy: decision.deadlineBy,
        };
        msg.deadline = new Date(decision.deadline).toISOString();
        if (typeof msg.notification === 'string') {
          const why = decision.deadlineBy === 'instrument' ? " (the instrument's own timeout)" : '';
          msg.notification = `${msg.notification}\nUnless someone answers by ${zonedTime(decision.deadline)}${why}, the policy answers: ${label}`;
        }
        if (!existing) {
          const p = pendingOf(decision, found, this.instrument, Date.now());
          this.schedule(p);
          this.addPending(p, lost);
        }
        send([msg, null, null]);
        break;
      }
      case 'answer-now': {
        if (lost) this.notifyWhileLost(msg, found, decision.answer, policy, send);
        // through the book like a semi-automatic default, so that it waits for another answer in flight
        const p = pendingOf(decision, found, this.instrument, Date.now());
        this.addPending(p, lost);
        void this.fire(p.key);
        break;
      }
      case 'escalate':
        msg.policy = policy;
        msg.outcome = 'escalated';
        msg.reason = decision.reason;
        send([msg, null, msg]);
        break;
    }
  }

  // ---- close

  close(removed: boolean, done: () => void): void {
    this.closed = true;
    if (this.coordinated && !removed) this.keptOverRedeploy.set(this.node.id, this.coordinated.mine());
    else this.keptOverRedeploy.delete(this.node.id);
    this.withdraw?.();
    runRuleEvents.off('added', this.onRunRule);
    if (this.sweep) clearInterval(this.sweep);
    answerEvents.off('answered', this.onAnswered);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.saveQueued && !removed) this.writeNow();
    this.saveQueued = false;
    if (removed) {
      this.books.delete(this.node.id);
      this.node.context().set(CONTEXT_KEY, undefined, this.store, () => done());
      return;
    }
    done();
  }
}
