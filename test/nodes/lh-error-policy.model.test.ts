/**
 * A model-based test of the error policy (issue 29): a small reference model of what the README promises, driven
 * together with the real lh-error-policy node (a real Node-RED runtime, the simulator's interface B) over seeded random
 * sequences of errors, run-watch msgs of several instruments (Idle missed, finished late, runs started elsewhere,
 * msgs naming no instrument), a person's "the same for similar errors", redeploys and rule edits. Every decision the
 * node takes must be the model's, and nothing else may leave the node.
 *
 * What the model promises (README, "error policy" and "Recovery ladders"):
 * - the first matching rule decides; no rule matches: notify only;
 * - a rule's ladder counts per rule identity (its id and what it matches, never its position), per instrument and
 *   per run (no run: per clock hour); the same error raised again keeps its step (also in a later run or hour: it
 *   takes none of that scope's steps, review63); the last step answers every later
 *   error; a redeploy (with or without rule edits) keeps the counts;
 * - a run is this instrument's: a state other than Idle starts it (a start time appearing is the same run), Idle or
 *   its own finished msg ends it; another instrument's msgs, and a finished msg of another run, change nothing;
 * - a person's run rule answers similar errors (same source, severity and title) at once until the scope ends, never
 *   a Fatal error and never one the lab's first matching rule gives a manual step; it counts no ladder step.
 *
 * The default run is bounded (LH_MODEL_RUNS sequences of LH_MODEL_STEPS operations; 4 × 50); the seed is printed, and
 * LH_MODEL_SEED replays one.
 */
import assert from 'node:assert/strict';
import path from 'path';

import FakeTimers from '@sinonjs/fake-timers';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng as Rand } from '../support/prng';
import { collect, helper } from '../support/runtime';
import { recoverySubmissions } from '../support/sim-requests';
import { loadWithPage } from './lh-answer-page.support';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

const built = (...p: string[]): string => path.resolve(__dirname, '..', '..', 'nodes', 'nodes', ...p);
const runScope = require(built('runs', 'run-scope.js')) as {
  addRunRule(instrument: string, rule: Msg): void;
  similarity(record: Msg): Msg;
};

const RUNS = Math.max(1, Number(process.env.LH_MODEL_RUNS) || 4);
const STEPS = Math.max(1, Number(process.env.LH_MODEL_STEPS) || 50);
const SEED = process.env.LH_MODEL_SEED ? Number(process.env.LH_MODEL_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
const HOUR = 3600_000;

/** Resolves once `check` holds, or fails naming what was awaited: timed by performance.now() (Date is faked here). */
async function until(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------------------------------

type Mode = 'manual' | 'semi-automatic' | 'walk-away';
interface ModelStep {
  mode: Mode;
  answer: string;
  delay: number;
}
interface ModelRule {
  id: string;
  source: 'any' | 'A' | 'B';
  minSeverity: '' | 'Error' | 'Fatal';
  pattern: '' | 'clot' | 'door' | 'level';
  steps: ModelStep[];
}
interface ErrorSeed {
  uuid: string;
  title: string;
  message: string;
  severity: string;
  /** the record as lh-error-poll emits it */
  record: Msg;
}
/** What the policy did with one raised error. */
type Outcome =
  | { kind: 'notify'; rule: number | null; ruleId?: string; step?: number }
  | { kind: 'scheduled' | 'escalated'; rule: number; ruleId: string; step: number }
  | { kind: 'answered'; rule: number; ruleId: string; step: number; answer: number }
  | { kind: 'run rule'; answer: number };

const RANK: Record<string, number> = { warning: 1, error: 2, fatal: 3 };

class PolicyModel {
  rules: ModelRule[] = [];
  private run?: { key: string; since: number };
  private lastRunEnd = 0;
  private scope = '';
  /** ladder key → error uuid → occurrence; `next` under the key '' */
  private ladders = new Map<string, { next: number; seen: Map<string, number> }>();
  private runRules: { title: string; severity: string; answer: number; at: number }[] = [];

  private current(now: number): { id: string; since: number } {
    if (this.run) return { id: `run:${this.run.key}`, since: this.run.since };
    const hour = Math.floor(now / HOUR) * HOUR;
    return { id: `hour:${hour}`, since: Math.max(hour, this.lastRunEnd) };
  }
  private follow(now: number): void {
    const id = this.current(now).id;
    if (id !== this.scope) {
      this.scope = id;
      this.restartCounts();
    }
  }
  private newScope(now: number): void {
    this.restartCounts();
    this.scope = this.current(now).id;
  }
  /** a new scope: every ladder at step 1 again; an error decided before, raised again, keeps its step (review63) */
  private restartCounts(): void {
    for (const l of this.ladders.values()) l.next = 0;
  }

  /** A run-watch msg of this instrument: `key` of the run ('' with `ended`: Idle). */
  own(phase: 'active' | 'ended', key: string, now: number): void {
    if (phase === 'active') {
      if (this.run?.key === key) return;
      if (this.run && this.run.key.endsWith('|') && key.startsWith(this.run.key)) {
        this.run.key = key; // the start time appeared: the same run
        this.scope = this.current(now).id;
        return;
      }
      if (this.run) this.lastRunEnd = now;
      this.run = { key, since: now };
      return this.newScope(now);
    }
    if (!this.run) return;
    const same = key === '' || key === this.run.key || (this.run.key.endsWith('|') && key.startsWith(this.run.key));
    if (!same) return; // another run's finished msg
    this.run = undefined;
    this.lastRunEnd = now;
    this.newScope(now);
  }

  tick(record: ErrorSeed, answer: number, now: number): void {
    const [title, severity] = [record.title, record.severity.toLowerCase()];
    this.runRules = this.runRules.filter((r) => !(r.title === title && r.severity === severity));
    this.runRules.push({ title, severity, answer, at: now });
  }

  private matches(rule: ModelRule, e: ErrorSeed): boolean {
    if (rule.source === 'A') return false; // every error here is a B error
    if (rule.minSeverity !== '' && (RANK[e.severity.toLowerCase()] ?? 99) < RANK[rule.minSeverity.toLowerCase()]) return false;
    return rule.pattern === '' || `${e.title}\n${e.message}`.toLowerCase().includes(rule.pattern);
  }

  private key(rule: ModelRule): string {
    return JSON.stringify([rule.id, rule.source, rule.minSeverity, rule.pattern, '']);
  }

  private ladder(rule: ModelRule): { next: number; seen: Map<string, number> } {
    let l = this.ladders.get(this.key(rule));
    if (!l) this.ladders.set(this.key(rule), (l = { next: 0, seen: new Map() }));
    return l;
  }

  raise(e: ErrorSeed, now: number): Outcome {
    this.follow(now);
    const index = this.rules.findIndex((r) => this.matches(r, e));
    const rule = index >= 0 ? this.rules[index] : undefined;
    const stepOf = (occurrence: number): number => Math.min(occurrence, rule!.steps.length - 1);
    const peek = rule ? (this.ladder(rule).seen.get(e.uuid) ?? this.ladder(rule).next) : 0;
    const toPerson = rule !== undefined && rule.steps[stepOf(peek)].mode === 'manual';
    const since = this.current(now).since;
    const fatal = e.severity.toLowerCase() === 'fatal';
    const chosen = [...this.runRules]
      .reverse()
      .find((r) => r.at >= since && r.title === e.title && r.severity === e.severity.toLowerCase());
    if (chosen && !fatal && !toPerson) return { kind: 'run rule', answer: chosen.answer };
    if (!rule) return { kind: 'notify', rule: null };
    const l = this.ladder(rule);
    let occurrence = l.seen.get(e.uuid);
    if (occurrence === undefined) l.seen.set(e.uuid, (occurrence = l.next++));
    const i = stepOf(occurrence);
    const step = rule.steps[i];
    const at = { rule: index + 1, ruleId: rule.id, step: i + 1 };
    if (step.mode === 'manual') return rule.steps.length === 1 ? { kind: 'notify', ...at } : { kind: 'escalated', ...at };
    if (step.mode === 'walk-away') return { kind: 'answered', ...at, answer: Number(step.answer) };
    return { kind: 'scheduled', ...at };
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The random sequences
// ---------------------------------------------------------------------------------------------------------------------

const TITLES = ['Clot detected', 'Door open', 'Liquid level not detected', 'Tip pickup failed'];
const SEVERITIES = ['Warning', 'Error', 'Fatal'] as const;

function randomRule(rand: Rand, id: string): ModelRule {
  const steps = Array.from({ length: 1 + rand.below(3) }, (): ModelStep => {
    const mode = rand.weighted<Mode>({ manual: 2, 'walk-away': 3, 'semi-automatic': 1 });
    // a semi-automatic default never falls due here (7 days; the errors' own timeout is longer): it is only scheduled
    return { mode, answer: mode === 'manual' ? '' : rand.pick(['1', '3']), delay: mode === 'semi-automatic' ? 604_800 : 0 };
  });
  return {
    id,
    source: rand.weighted({ any: 2, B: 3, A: 1 }),
    minSeverity: rand.weighted({ '': 4, Error: 1, Fatal: 1 }),
    pattern: rand.weighted({ '': 1, clot: 3, door: 2, level: 2 }),
    steps,
  };
}

function flowRule(r: ModelRule): Msg {
  return { id: r.id, source: r.source, minSeverity: r.minSeverity, pattern: r.pattern, code: '', steps: r.steps };
}

describe('lh-error-policy: model-based test over seeded random sequences (issue 29)', function () {
  this.timeout(60_000 + RUNS * STEPS * 2000);
  const sim = useInstrument({
    afterEach: () => {
      restartMemory();
    },
  });
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`every decision agrees with the model (seed ${SEED}, ${RUNS} × ${STEPS}; LH_MODEL_SEED, LH_MODEL_RUNS to change)`, async function () {
    console.log(`      model seed: LH_MODEL_SEED=${SEED}`);
    // Date and the monotonic clock (the run and hour scopes and run-rule times follow them, run-scope.ts); timers and
    // the HTTP exchange run for real
    clock = FakeTimers.install({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-24T10:00:00.000Z') });
    const rand = new Rand(SEED);
    for (let run = 0; run < RUNS; run++) await sequence(rand, run);
  });

  async function sequence(rand: Rand, run: number): Promise<void> {
    const model = new PolicyModel();
    const trace: string[] = [];
    let nextRuleId = 1;
    model.rules = Array.from({ length: 1 + rand.below(4) }, () => randomRule(rand, `rule-${nextRuleId++}`));
    const server = bServerFlow(sim);
    const flowOf = (rules: ModelRule[]): Msg[] => [
      ...server.nodes,
      {
        id: 'policy',
        type: 'lh-error-policy',
        version: 3,
        server: 'server',
        rules: rules.map(flowRule),
        wires: [['notify'], ['auto'], ['escalate']],
      },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
    ];
    let out = { notify: [] as Msg[], auto: [] as Msg[], escalate: [] as Msg[] };
    const listen = (): void => {
      out = {
        notify: collect(helper.getNode('notify')),
        auto: collect(helper.getNode('auto')),
        escalate: collect(helper.getNode('escalate')),
      };
    };
    await loadWithPage(flowOf(model.rules), server.credentials);
    sim.state.handlers.add('nodered1');
    listen();
    const instrumentKey = (helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey;
    const ownInstrument = {
      name: 'sim',
      baseUrl: sim.baseUrl.replace(/\/+$/, ''),
      instrumentUrl: sim.instrumentUrl.replace(/\/+$/, ''),
    };
    const others = [
      { name: 'Y', baseUrl: 'http://127.0.0.1:1', instrumentUrl: 'https://127.0.0.1:2' },
      { name: 'Z', baseUrl: 'http://lab-2.example:8090', instrumentUrl: '' },
    ];
    const receive = (msg: Msg): void => (helper.getNode('policy') as unknown as { receive(m: Msg): void }).receive(msg);
    const submissions = (): number[] => recoverySubmissions(sim).map((r) => Number((r.body as Msg).selectedActionId));

    // this instrument's runs as lh-run-watch reports them
    let protocol = 1;
    let current: { protocol: number; start: string | null } | undefined;
    const ended: { protocol: number; start: string }[] = [];
    const stateMsg = (instrument: Msg | undefined, p: number, start: string | null, state = 'Running'): Msg => ({
      topic: 'state',
      state,
      payload: { protocolRunState: state, protocolId: p, protocolName: `P${p}`, startTime: start ?? '0001-01-01T00:00:00' },
      ...(instrument ? { instrument } : {}),
    });
    const finishedMsg = (instrument: Msg | undefined, p: number, start: string | null): Msg => ({
      topic: 'finished',
      result: 'completed',
      payload: { result: 'completed', protocolId: p, protocolName: `P${p}`, startTime: start },
      ...(instrument ? { instrument } : {}),
    });
    const idleMsg = (instrument: Msg | undefined): Msg => ({
      topic: 'state',
      state: 'Idle',
      payload: { protocolRunState: 'Idle', protocolId: null, startTime: '0001-01-01T00:00:00' },
      ...(instrument ? { instrument } : {}),
    });
    /** Sends this instrument's run-watch msg to the node and the model (a msg written by hand names no instrument). */
    const own = (msg: Msg): void => {
      const named = rand.chance(0.9) ? msg : { ...msg, instrument: undefined };
      if (named.instrument === undefined) delete named.instrument;
      const payload = msg.payload as Msg;
      const start = typeof payload.startTime === 'string' && !payload.startTime.startsWith('0001-') ? payload.startTime : '';
      const key = `${String(payload.protocolId)}|${start}`;
      trace.push(`own ${String(msg.topic)} ${String(msg.state ?? '')} ${key}${named.instrument ? '' : ' (no instrument)'}`);
      receive(named);
      const now = Date.now();
      if (msg.state === 'Idle') model.own('ended', '', now);
      else model.own(msg.topic === 'finished' ? 'ended' : 'active', key, now);
    };
    const startTime = (): string => new Date(Date.now()).toISOString();

    const raised: { seed: ErrorSeed; outcome: Outcome }[] = [];

    async function raise(seed: ErrorSeed): Promise<void> {
      const expected = model.raise(seed, Date.now());
      const before = {
        notify: out.notify.length,
        auto: out.auto.length,
        escalate: out.escalate.length,
        sent: submissions().length,
      };
      trace.push(`raise ${seed.title} (${seed.severity}) ${seed.uuid.slice(0, 8)} → expect ${JSON.stringify(expected)}`);
      receive({ payload: structuredClone(seed.record), source: 'B', event: 'raised' });
      try {
        await until(
          () => out.notify.length > before.notify || out.auto.length > before.auto || out.escalate.length > before.escalate,
          'what the policy did',
          10_000,
        );
      } catch (err) {
        throw disagreement(err);
      }
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); // a second output of the same decision
      const fresh = {
        notify: out.notify.slice(before.notify),
        auto: out.auto.slice(before.auto),
        escalate: out.escalate.slice(before.escalate),
      };
      try {
        const observed = observe(fresh);
        if (observed.kind === 'answered' || observed.kind === 'run rule') {
          assert.deepEqual(submissions().slice(before.sent), [observed.answer], 'the instrument received that one answer');
        } else assert.equal(submissions().length, before.sent, 'nothing was sent to the instrument');
        assert.deepEqual(observed, expected);
      } catch (err) {
        throw disagreement(err);
      }
      raised.push({ seed, outcome: expected });
    }

    function disagreement(err: unknown): Error {
      return new Error(
        `LH_MODEL_SEED=${SEED}, sequence ${run}: the node and the model disagree\n${trace.slice(-25).join('\n')}\n` +
          `${err instanceof Error ? err.message : String(err)}`,
      );
    }
    /** What the node did, read from what left it: one decision, nothing else. */
    function observe(fresh: { notify: Msg[]; auto: Msg[]; escalate: Msg[] }): Outcome {
      const counts = `notify ${fresh.notify.length}, auto ${fresh.auto.length}, escalate ${fresh.escalate.length}`;
      if (fresh.auto.length > 0) {
        assert.equal(fresh.notify.length + fresh.escalate.length + fresh.auto.length, 1, `one msg (${counts})`);
        const p = fresh.auto[0].payload as Msg;
        assert.equal(p.outcome, 'answered');
        if (p.runRule) return { kind: 'run rule', answer: Number(p.response) };
        return {
          kind: 'answered',
          rule: Number(p.rule) + 1,
          ruleId: String(p.ruleId),
          step: Number(p.step),
          answer: Number(p.response),
        };
      }
      assert.equal(fresh.notify.length, 1, `one notification (${counts})`);
      const policy = fresh.notify[0].policy as Msg;
      if (fresh.escalate.length > 0) {
        assert.equal(fresh.escalate.length, 1, counts);
        assert.equal(policy.mode, 'manual');
        return { kind: 'escalated', rule: Number(policy.rule), ruleId: String(policy.ruleId), step: Number(policy.step) };
      }
      if (policy.mode === 'semi-automatic')
        return { kind: 'scheduled', rule: Number(policy.rule), ruleId: String(policy.ruleId), step: Number(policy.step) };
      assert.equal(policy.mode, 'manual');
      return policy.rule === null
        ? { kind: 'notify', rule: null }
        : { kind: 'notify', rule: Number(policy.rule), ruleId: String(policy.ruleId), step: Number(policy.step) };
    }

    for (let i = 0; i < STEPS; i++) {
      clock!.tick(1000);
      const op = rand.weighted({
        error: 40,
        again: 6,
        runWatch: 18,
        otherInstrument: 10,
        tick: 7,
        redeploy: 5,
        editRules: 8,
        hour: 3,
      });
      switch (op) {
        case 'error': {
          const record = sim.injectInstrumentError({
            title: rand.pick(TITLES),
            message: 'Channel 3, plate 1 well B4.',
            severity: rand.pick(SEVERITIES),
            timeoutSeconds: 10 ** 8,
          }) as unknown as Msg;
          const text = (k: string): string => String(record[k]);
          await raise({ uuid: text('uuid'), title: text('title'), message: text('message'), severity: text('severity'), record });
          break;
        }
        case 'again': {
          // an error only ever notified or escalated (still pending at the instrument, no default held for it) raised
          // again: it keeps its step in its scope (one with a pending default keeps that default: not modelled here)
          const settled = new Set(
            raised.filter((r) => r.outcome.kind !== 'notify' && r.outcome.kind !== 'escalated').map((r) => r.seed.uuid),
          );
          const candidates = raised.filter((r) => !settled.has(r.seed.uuid));
          if (candidates.length > 0) await raise(rand.pick(candidates).seed);
          break;
        }
        case 'runWatch': {
          const event = rand.weighted({ start: 3, startTime: 2, end: 2, idleMissed: 2, lateFinished: 1, repeat: 1 });
          if (event === 'start' && !current) {
            current = { protocol: protocol++, start: null }; // first seen Loading, without its start time
            own(stateMsg(ownInstrument, current.protocol, null, 'Loading'));
          } else if (event === 'startTime' && current && current.start === null) {
            current.start = startTime();
            own(stateMsg(ownInstrument, current.protocol, current.start));
          } else if (event === 'end' && current) {
            own(idleMsg(ownInstrument));
            own(finishedMsg(ownInstrument, current.protocol, current.start));
            if (current.start) ended.push({ protocol: current.protocol, start: current.start });
            current = undefined;
          } else if (event === 'idleMissed' && current && current.start) {
            // the next run started between two polls: its state first, then the old run's finished
            const old = current;
            current = { protocol: protocol++, start: startTime() };
            own(stateMsg(ownInstrument, current.protocol, current.start));
            own(finishedMsg(ownInstrument, old.protocol, old.start));
            ended.push({ protocol: old.protocol, start: old.start! });
          } else if (event === 'lateFinished' && ended.length > 0) {
            const old = rand.pick(ended);
            own(finishedMsg(ownInstrument, old.protocol, old.start));
          } else if (event === 'repeat' && current) {
            own(stateMsg(ownInstrument, current.protocol, current.start, rand.pick(['Running', 'Paused', 'ErrorHandling'])));
          }
          break;
        }
        case 'otherInstrument': {
          const instrument = rand.pick(others);
          const p = 100 + rand.below(3);
          const msg = rand.pick([
            stateMsg(instrument, p, startTime()),
            stateMsg(instrument, p, null, 'Loading'),
            finishedMsg(instrument, p, startTime()),
            idleMsg(instrument),
            // another instrument finishing a run with this instrument's current run's protocol and start
            ...(current ? [finishedMsg(instrument, current.protocol, current.start)] : []),
          ]);
          trace.push(`other ${instrument.name} ${String(msg.topic)} ${String(msg.state ?? '')}`);
          receive(msg);
          break;
        }
        case 'tick': {
          // a person answered an error on the page and ticked "the same for similar errors until this run ends"
          if (raised.length === 0) break;
          const { seed } = rand.pick(raised);
          const answer = Number(rand.pick(['1', '3']));
          trace.push(`tick on ${seed.title} (${seed.severity}) → ${answer}`);
          runScope.addRunRule(instrumentKey, {
            source: 'B',
            match: runScope.similarity(seed.record),
            answer: String(answer),
            by: 'ann',
            at: Date.now(),
            errorKey: seed.uuid,
          });
          model.tick(seed, answer, Date.now());
          break;
        }
        case 'redeploy': {
          trace.push('redeploy');
          await helper.setFlows(flowOf(model.rules), 'full', server.credentials);
          listen();
          break;
        }
        case 'editRules': {
          const edit = rand.weighted({ add: 3, remove: 2, move: 2, steps: 2, pattern: 1 });
          const rules = [...model.rules];
          const at = rand.below(rules.length + 1);
          if (edit === 'add' && rules.length < 6) rules.splice(at, 0, randomRule(rand, `rule-${nextRuleId++}`));
          else if (edit === 'remove' && rules.length > 1) rules.splice(rand.below(rules.length), 1);
          else if (edit === 'move' && rules.length > 1) {
            const [moved] = rules.splice(rand.below(rules.length), 1);
            rules.splice(rand.below(rules.length + 1), 0, moved);
          } else if (edit === 'steps' && rules.length > 0) {
            const i = rand.below(rules.length);
            rules[i] = {
              ...randomRule(rand, rules[i].id),
              source: rules[i].source,
              minSeverity: rules[i].minSeverity,
              pattern: rules[i].pattern,
            };
          } else if (edit === 'pattern' && rules.length > 0) {
            const i = rand.below(rules.length);
            rules[i] = { ...rules[i], pattern: rand.pick(['', 'clot', 'door', 'level'] as const) };
          }
          model.rules = rules;
          trace.push(
            `edit rules (${edit}): ${rules.map((r) => `${r.id}[${r.source},${r.minSeverity},${r.pattern},${r.steps.map((s) => s.mode[0] + s.answer).join('/')}]`).join(' ')}`,
          );
          await helper.setFlows(flowOf(model.rules), 'full', server.credentials);
          listen();
          break;
        }
        case 'hour':
          trace.push('20 minutes pass');
          clock!.tick(20 * 60_000);
          break;
      }
    }
    await helper.unload();
    restartMemory();
  }
});
