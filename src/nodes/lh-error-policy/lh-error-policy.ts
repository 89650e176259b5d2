import { fingerprint, identityOf, InstrumentError, LhError, LiquidHandlerClient, PendingError, sameError } from '../../client';
import { answerAuditMsg } from '../answering/answer-audit';
import { answerA, answerB, answerEvents, AnswerOutcome, instrumentKeyOf, lookupAnswer } from '../answering/answer-error';
import { asAutomatic } from '../answering/automatic';
import { errorInMsg } from '../answering/error-in-msg';
import {
  isOwnRun,
  policyApplies,
  RunRule,
  runRuleEvents,
  runRuleFor,
  runRulesOf,
  RunScope,
  runSighting,
} from '../runs/run-scope';
import { asNodeActor } from '../shared/audit';
import { InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { migrateConfig } from '../shared/migrations';
import { asNode, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import type { ErrorSource } from '../shared/poll-messages';
import { LhServerNode, requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { zonedTime } from '../shared/zoned-time';
import { answerLabel, decide, Decision } from './decision';
import { books, newBook, PendingDefault } from './pending-defaults';
import { CompiledRule, compileRules, legacyRuleSignature, matchRule, ruleSignature, stepAt } from './rules';

const CONTEXT_KEY = 'lhErrorPolicy';
const MAX_TIMER_MS = 2 ** 31 - 1;
const OP = 'error-policy';
const IN_FLIGHT_RECHECK_MS = 1000;
/** How often the holder looks for defaults that fell due while their holder was down. */
const COORDINATED_SWEEP_MS = 1000;

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

export = function register(RED: Red): void {
  /** per policy node id: the coordinated defaults only this replica had when its node closed (a redeploy) */
  const keptOverRedeploy = new Map<string, string[]>();

  function LhErrorPolicy(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const store = typeof config.store === 'string' && config.store.trim() !== '' ? config.store.trim() : undefined;
    const by = typeof config.by === 'string' && config.by.trim() !== '' ? config.by.trim() : 'policy';
    const timers = new Map<string, NodeJS.Timeout>();
    let closed = false;

    let setupError: LhError | undefined;
    let rules: CompiledRule[] = [];
    let server: LhServerNode | undefined;
    let client: LiquidHandlerClient | undefined;
    /** this policy's instrument as run-watch msgs name it: run-watch msgs of other instruments count nothing here */
    let own: InstrumentInfo | undefined;
    try {
      rules = compileRules(config.rules);
      ({ server, client } = requireClient(RED, config.server, node.type));
      own = instrumentInfo(server, client);
      status.follow(server.connection);
    } catch (err) {
      setupError = err instanceof LhError ? err : new LhError(String(err), { kind: 'config', operation: OP });
      status.failed(setupError);
      node.error(setupError.message);
    }
    const instrument = server?.instrumentKey ?? '';
    // several Node-REDs (lh-coordination): each default is sent by one replica, and a new holder sends those that
    // fell due while their holder was down
    const coordinated =
      server?.coordinator && server.coordination ? server.coordinator.defaults<PendingDefault>(instrument, node.id) : undefined;

    let entry = books.get(node.id);
    if (!entry) books.set(node.id, (entry = { book: newBook(), restored: false, scope: new RunScope() }));
    const book = entry.book;
    const scope = entry.scope;

    let saveQueued = false;
    function writeNow(): void {
      saveQueued = false;
      const mine = coordinated ? { mine: coordinated.mine() } : {};
      node.context().set(CONTEXT_KEY, { ...book.snapshot(), scope: scope.snapshot(), ...mine }, store, (err) => {
        if (err) node.warn(RED._('lh-error-policy.errors.persist', { message: err.message }));
      });
    }
    /** One write per burst of changes (a snapshot costs O(pending)); close() writes what is still queued. */
    function save(): void {
      if (saveQueued) return;
      saveQueued = true;
      setImmediate(() => {
        if (saveQueued) writeNow();
      });
    }

    function showStatus(): void {
      if (setupError) return;
      const now = Date.now();
      const runRules = runRulesOf(instrument, scope.current(now).since).length;
      const where = scope.current(now).kind;
      if (runRules > 0) status.warn('lh-error-policy.status.runRules', { count: book.size, rules: runRules, where });
      else if (book.size > 0) status.warn('lh-error-policy.status.pending', { count: book.size });
      else status.ok('lh-error-policy.status.idle');
    }

    function schedule(p: PendingDefault): void {
      const old = timers.get(p.key);
      if (old) clearTimeout(old);
      const wait = Math.min(MAX_TIMER_MS, Math.max(0, p.deadline - Date.now()));
      timers.set(
        p.key,
        setTimeout(() => {
          timers.delete(p.key);
          if (p.deadline > Date.now())
            schedule(p); // a deadline beyond the longest timer
          else void fire(p.key);
        }, wait),
      );
    }

    /**
     * Coordinated: the errors whose default this node finished (sent, escalated, cancelled), by key. A copy of such a
     * default that another replica hands over later (it notified the error while Redis was lost) is not sent again.
     */
    const finished = new Map<string, Record<string, unknown>>();
    const FINISHED_KEPT = 1000;

    function cancel(key: string): PendingDefault | undefined {
      if (coordinated) void coordinated.cancel(key);
      const t = timers.get(key);
      if (t) clearTimeout(t);
      timers.delete(key);
      const p = book.take(key);
      if (p) save();
      if (p) finish(key, p.record);
      return p;
    }

    function finish(key: string, record: Record<string, unknown>): void {
      if (!coordinated) return;
      finished.delete(key);
      finished.set(key, record);
      if (finished.size > FINISHED_KEPT) finished.delete(finished.keys().next().value as string);
    }

    /** Whether a default handed over to this replica's sweep is one this node finished already (the same error). */
    function finishedHere(p: PendingDefault): boolean {
      const record = finished.get(p.key);
      if (record === undefined) return false;
      // the same error, surely (unsure: sent, and the answer ledger or the instrument has the last word)
      const [x, y] = [identityOf(record), identityOf(p.record)];
      return x && y ? sameError(x, y) : JSON.stringify(record) === JSON.stringify(p.record);
    }

    function auditMsg(p: PendingDefault, outcome: AnswerOutcome): NodeMessage {
      return answerAuditMsg({
        source: p.source,
        errorKey: p.key,
        response: p.answer,
        outcome,
        error: p.record,
        details: {
          label: answerLabel(p.source, p.record, p.answer),
          by,
          rule: p.rule >= 0 ? p.rule : null,
          ...(p.ruleId ? { ruleId: p.ruleId } : {}),
          step: p.step ?? 1,
          ...(p.inputs && Object.keys(p.inputs).length > 0 ? { inputs: p.inputs } : {}),
          ...(p.items ? { items: p.items } : {}),
          ...(p.runRule
            ? { runRule: { by: p.runRule.by, at: new Date(p.runRule.at).toISOString(), chosenOn: p.runRule.errorKey } }
            : {}),
        },
      });
    }

    function send(p: PendingDefault): Promise<AnswerOutcome> {
      if (!client || !server)
        return Promise.resolve({
          outcome: 'failed',
          message: 'no instrument',
          error: new LhError('no instrument', { kind: 'config', operation: OP }),
        });
      const field = p.runRule ? 'inputs' : `rules[${p.rule}].steps[${(p.step ?? 1) - 1}].inputs`;
      // the audit trail records this policy node as the actor of the default it sends
      // automatic: with coordination, claimed under the lease (a replica that lost the instrument sends nothing)
      return asNodeActor(node, undefined, () =>
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

    function report(p: PendingDefault, outcome: AnswerOutcome): void {
      const msg = auditMsg(p, outcome);
      switch (outcome.outcome) {
        case 'answered':
          node.send([null, msg, null]);
          break;
        case 'already-answered': {
          const err = new LhError(outcome.message, { kind: 'already-answered', operation: OP, body: outcome.previous });
          msg.error = err.toMsgError();
          node.error(err, msg);
          break;
        }
        case 'not-pending':
          node.debug(outcome.message);
          break;
        default:
          node.send([null, null, msg]);
      }
      showStatus();
    }

    /** Someone's answer is in flight: the default waits for it (a refused answer must not cancel the default). */
    function waitForOther(p: PendingDefault): void {
      const { inFlight: _sending, ...waiting } = p;
      const again: PendingDefault = { ...waiting, deadline: Date.now() + IN_FLIGHT_RECHECK_MS };
      book.add(again);
      save();
      // coordinated: a default taken from the shared schedule goes back there while it waits (a new holder sends it)
      if (coordinated) void coordinated.requeue(again);
      schedule(again);
    }

    /**
     * Sends the default. Its book entry stays, marked in flight, until the outcome is known: a redeploy or a crash
     * meanwhile leaves it for the next instance (the answer ledger and the instrument refuse a second answer).
     */
    async function fire(key: string): Promise<void> {
      const t = timers.get(key);
      if (t) clearTimeout(t);
      timers.delete(key);
      const p = book.get(key);
      if (!p || !client) return;
      const given = lookupAnswer(client, key, identityOf(p.record));
      if (given?.outcome === 'answered') {
        cancel(key);
        return showStatus(); // someone answered first: the default is not sent
      }
      if (given) return waitForOther(p);
      if (coordinated) {
        const verdict = await coordinated.take(key, p);
        if (closed) return;
        if (verdict === 'later') return waitForOther(p); // Redis unreachable: no automatic answer until it is back
        if (verdict === 'drop') {
          // another replica sends it (it holds the instrument now), or it was cancelled there
          timers.delete(key);
          if (book.take(key)) save();
          return showStatus();
        }
      }
      book.add({ ...p, inFlight: true });
      save();
      const outcome = await send(p);
      if (outcome.outcome === 'failed' && outcome.fenced && coordinated) {
        // another replica holds the instrument now: nothing was sent, the default goes back for it to send (once);
        // when Redis does not take it, this replica keeps it and hands it over at its next look
        if (!(await coordinated.giveBack(p))) return closed ? undefined : waitForOther(p);
        timers.delete(key);
        if (book.take(key)) save();
        return showStatus();
      }
      const over =
        outcome.outcome === 'answered' ||
        outcome.outcome === 'not-pending' ||
        (outcome.outcome === 'already-answered' && !outcome.inFlight);
      // another error raised under the id meanwhile (a reused id, or two errors listed under one) keeps its own default
      const held = book.get(key);
      const mine = !held || sameRecord(held.record, p.record);
      if (over) {
        if (mine) cancel(key);
      } else if (closed)
        return; // kept in the book, in flight: the next instance sends it again
      else if (outcome.outcome === 'already-answered') return waitForOther(p);
      else if (mine) cancel(key); // refused or failed (or ambiguous): escalated, a person must act
      if (closed && outcome.outcome !== 'answered') return;
      if (coordinated && answeredByThisPolicy(p, outcome)) {
        // a copy of this default handed over by another replica (or swept after a failover) found the error answered
        // already by this very default on some replica: nothing was sent, and nothing is wrong
        node.debug(outcome.message);
        return showStatus();
      }
      report(p, outcome);
    }

    /** Whether an answer refused as given already is this policy's own default (the same answer, by the same name), settled. */
    function answeredByThisPolicy(
      p: PendingDefault,
      outcome: AnswerOutcome,
    ): outcome is Extract<AnswerOutcome, { outcome: 'already-answered' }> {
      if (outcome.outcome !== 'already-answered' || outcome.inFlight || !outcome.previous) return false;
      const previous = outcome.previous;
      if (previous.outcome !== 'answered' || previous.by !== by) return false;
      return p.source === 'B' ? Number(previous.response) === Number(p.answer) : previous.response === p.answer;
    }

    function onAnswered(where: string, key: string): void {
      const pending = book.get(key);
      if (client && pending && where === instrumentKeyOf(client) && lookupAnswer(client, key, identityOf(pending.record))) {
        cancel(key);
        showStatus();
      }
    }
    answerEvents.on('answered', onAnswered);
    const withdraw = setupError ? undefined : policyApplies(instrument, node.id);
    /** a person chose a run-scoped answer on the page: the status shows it */
    const onRunRule = (where: string): void => {
      if (where === instrument) showStatus();
    };
    runRuleEvents.on('added', onRunRule);

    function startPending(kept: string[] = []): void {
      // coordinated: a default only this replica had before the redeploy or restart is still its own to send or hand over
      for (const key of kept) if (coordinated && book.get(key)) coordinated.keep(key);
      for (const p of book.all()) if (p.instrument === instrument) schedule(p);
      showStatus();
    }

    // the holder's sweep: defaults due that no replica sent (their holder died) are sent here, once
    const sweep = coordinated
      ? setInterval(() => {
          void coordinated.due(Date.now()).then((due) => {
            for (const p of due) {
              if (closed || p.instrument !== instrument) continue;
              if (finishedHere(p) && !book.get(p.key)) {
                coordinated.done(p.key);
                node.debug(
                  `error-policy: the default of error ${p.key} was handed over after this node finished it: not sent again`,
                );
                continue;
              }
              book.add(p);
              save();
              void fire(p.key);
            }
          });
        }, COORDINATED_SWEEP_MS)
      : undefined;

    if (!setupError) {
      if (entry.restored) startPending(keptOverRedeploy.get(node.id));
      else {
        entry.restored = true;
        node.context().get(CONTEXT_KEY, store, (err, value) => {
          if (err) node.warn(RED._('lh-error-policy.errors.persist', { message: err.message }));
          else {
            if (value && typeof value === 'object') scope.restore((value as { scope?: unknown }).scope);
            if (book.restore(value, instrument) > 0) save();
          }
          if (!closed) startPending(err ? [] : keysIn(value));
        });
      }
    }

    /** Instruments whose run-watch msgs this policy ignored (logged once each, bounded): a spelling that differs shows. */
    const ignoredRuns = new Set<string>();
    function ignoredRunOf(baseUrl: string): void {
      if (ignoredRuns.has(baseUrl) || ignoredRuns.size >= 20) return;
      ignoredRuns.add(baseUrl);
      node.log(RED._('lh-error-policy.log.otherRun', { instrument: baseUrl, own: own?.baseUrl ?? '' }));
    }

    /** The decision of a run-scoped rule a person chose on the answer page: answer at once, the same way. */
    function runRuleDecision(r: RunRule): {
      p: Omit<PendingDefault, 'key' | 'record' | 'source' | 'instrument'>;
      policy: Record<string, unknown>;
    } {
      return {
        p: {
          answer: r.answer,
          deadline: Date.now(),
          rule: -1,
          ...(r.inputs ? { inputs: r.inputs } : {}),
          ...(r.items ? { items: r.items } : {}),
          runRule: { by: r.by, at: r.at, errorKey: r.errorKey },
        },
        policy: {
          mode: 'walk-away',
          rule: null,
          runRule: { by: r.by, at: new Date(r.at).toISOString(), chosenOn: r.errorKey },
          answer: r.answer,
        },
      };
    }

    /** The key of an error among a ladder's counts: its id and what the instrument says of it. */
    function ladderErrorId(found: { key: string; record: Record<string, unknown> }): string {
      const seen = identityOf(found.record);
      return seen ? `${found.key}|${fingerprint(seen)}` : found.key;
    }

    /** The ladder key of a rule, taking over counts 0.3 kept under the rule's position (once, at the first match). */
    function ladderKey(rule: CompiledRule): string {
      const key = ruleSignature(rule);
      scope.adopt(legacyRuleSignature(rule), key);
      return key;
    }

    /**
     * Whether the lab's own rules send this error to a person: the first matching rule gives it a manual step (it
     * notifies or escalates). A person's "the same for similar errors" never overrides that. Records nothing.
     */
    function labSendsToPerson(found: { source: ErrorSource; key: string; record: Record<string, unknown> }): boolean {
      const rule = matchRule(rules, found.source, found.record);
      if (!rule) return false;
      const occurrence = scope.peek(ladderKey(rule), ladderErrorId(found), Date.now());
      return stepAt(rule, occurrence).step.mode === 'manual';
    }

    /** The step of the matched rule's ladder for this error: its occurrence among the rule's matches in this run. */
    function ladderDecision(found: { source: ErrorSource; key: string; record: Record<string, unknown> }): Decision {
      const now = Date.now();
      const rule = matchRule(rules, found.source, found.record);
      if (!rule) return decide(undefined, found.source, found.record, now);
      const occurrence = scope.occurrence(ladderKey(rule), ladderErrorId(found), now);
      save();
      return decide(rule, found.source, found.record, now, occurrence);
    }

    /** The decision already taken for an error raised again while its default is pending (the same step, deadline and answer). */
    function heldDecision(p: PendingDefault): Decision {
      // the rule it was decided by, known by its id (a rule added above since has moved it); saved before ids: by position
      const rule = p.ruleId !== undefined ? rules.find((r) => r.id === p.ruleId) : rules[p.rule];
      if (!rule) {
        // a run-scoped rule's answer, or a default kept from a rule a redeploy removed: it goes out as decided
        const steps = [{ mode: 'semi-automatic' as const, answer: p.answer, delay: 0, inputs: p.inputs ?? {} }];
        const kept = { id: p.ruleId ?? '', index: p.rule, source: p.source, minSeverity: '', pattern: '', code: '', steps };
        return {
          kind: 'schedule',
          rule: kept,
          rung: { rule: kept, step: steps[0], number: 1, of: 1 },
          answer: p.answer,
          deadline: p.deadline,
          deadlineBy: p.deadlineBy ?? 'rule',
        };
      }
      const number = Math.min(p.step ?? 1, rule.steps.length);
      const rung = { rule, step: rule.steps[number - 1], number, of: rule.steps.length };
      return { kind: 'schedule', rule, rung, answer: p.answer, deadline: p.deadline, deadlineBy: p.deadlineBy ?? 'rule' };
    }

    node.on('input', (msg: NodeMessage, send, done) => {
      if (setupError) return done(setupError);
      const run = runSighting(msg);
      if (run) {
        // a message of lh-run-watch: the run the ladders count in (not passed on); another instrument's run is not ours
        if (own && !isOwnRun(run, own)) ignoredRunOf(run.instrument?.baseUrl ?? '');
        else if (scope.sighting(run, Date.now())) save();
        showStatus();
        return done();
      }
      const found = errorInMsg(msg);
      /** sent by this replica without coordination (Redis unreachable): its default is this replica's to hand on */
      const lost = msg.coordination === 'lost';
      if (!found || (msg.event !== 'raised' && msg.event !== 'resolved')) {
        send([msg, null, null]);
        return done();
      }
      const held = book.get(found.key);
      const heldSame = held !== undefined && sameRecord(held.record, found.record);
      if (msg.event === 'resolved') {
        const p = heldSame ? cancel(found.key) : undefined; // a resolution of an earlier error under the id leaves this default
        if (p) msg.policy = { cancelled: true, rule: p.rule >= 0 ? p.rule + 1 : null };
        // coordinated, an error this node held no default for (raised by a replica while Redis was lost): a copy of
        // its default that replica hands over later is not sent
        else if (!held) finish(found.key, found.record);
        showStatus();
        send([msg, null, null]);
        return done();
      }
      // the instrument reused the id: a default held for the error that had it before is over
      if (held && !heldSame) cancel(found.key);
      const existing = book.get(found.key);
      // a person's "the same for similar errors" answers only where the lab's own rules do not send the error to a person
      const runRule =
        existing || labSendsToPerson(found)
          ? undefined
          : runRuleFor(instrument, scope.current(Date.now()).since, found.source, found.record);
      if (runRule) {
        // a person chose on the answer page: "the same for similar errors until this run ends"
        const { p, policy } = runRuleDecision(runRule);
        msg.policy = policy;
        book.add({ ...p, key: found.key, source: found.source, instrument, record: found.record });
        save();
        void fire(found.key);
        showStatus();
        return done();
      }
      const decision: Decision = existing ? heldDecision(existing) : ladderDecision(found);
      const rung = decision.rung;
      const where = scope.current(Date.now());
      const policy: Record<string, unknown> = {
        mode: rung?.step.mode ?? 'manual',
        rule: decision.rule && decision.rule.index >= 0 ? decision.rule.index + 1 : null,
        ...(decision.rule && decision.rule.id !== '' ? { ruleId: decision.rule.id } : {}),
        ...(rung
          ? { step: rung.number, steps: rung.of, scope: where.kind, ...(where.kind === 'run' ? { run: where.key } : {}) }
          : {}),
      };
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
            const p: PendingDefault = {
              key: found.key,
              source: found.source,
              answer: decision.answer,
              deadline: decision.deadline,
              deadlineBy: decision.deadlineBy,
              rule: decision.rule.index,
              ruleId: decision.rule.id,
              step: decision.rung.number,
              ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
              instrument,
              record: found.record,
            };
            book.add(p);
            save();
            schedule(p);
            if (coordinated)
              void coordinated.add(p, { lost }).then(() => {
                if (!closed) save(); // what a restart keeps (mine)
              });
          }
          send([msg, null, null]);
          break;
        }
        case 'answer-now': {
          // through the book like a semi-automatic default, so that it waits for another answer in flight
          const inputs = decision.rung.step.inputs;
          const p: PendingDefault = {
            key: found.key,
            source: found.source,
            answer: decision.answer,
            deadline: Date.now(),
            rule: decision.rule.index,
            ruleId: decision.rule.id,
            step: decision.rung.number,
            ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
            instrument,
            record: found.record,
          };
          book.add(p);
          save();
          if (coordinated)
            void coordinated.add(p, { lost }).then(() => {
              if (!closed) save(); // what a restart keeps (mine)
            });
          void fire(p.key);
          break;
        }
        case 'escalate':
          msg.policy = policy;
          msg.outcome = 'escalated';
          msg.reason = decision.reason;
          send([msg, null, msg]);
          break;
      }
      showStatus();
      done();
    });

    node.on('close', (removed: boolean, done: () => void) => {
      closed = true;
      if (coordinated && !removed) keptOverRedeploy.set(node.id, coordinated.mine());
      else keptOverRedeploy.delete(node.id);
      withdraw?.();
      runRuleEvents.off('added', onRunRule);
      if (sweep) clearInterval(sweep);
      answerEvents.off('answered', onAnswered);
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      if (saveQueued && !removed) writeNow();
      saveQueued = false;
      if (removed) {
        books.delete(node.id);
        node.context().set(CONTEXT_KEY, undefined, store, () => done());
        return;
      }
      done();
    });
  }

  RED.nodes.registerType('lh-error-policy', LhErrorPolicy);
};
