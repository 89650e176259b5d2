/**
 * review63: a seeded model-based test of error policies and recovery ladders over two instruments. Two simulators,
 * one lh-error-policy per instrument, and each instrument's errors and run-watch msgs wired into BOTH policies (a lab
 * that wired its error polls and run watches into every policy). Drawn per sequence: 1 to 3 rules matching by title
 * pattern and minimum severity, each a ladder of 1 to 3 steps (manual, semi-automatic with a delay, walk-away), with
 * answers an error may or may not offer (errors offer a drawn subset of Retry, Abort, Skip). Drawn operations: an
 * error raised (Warning, Error, Fatal) on either instrument, the same error raised again (a redelivery), resolved on
 * the instrument, answered by a person (lh-answer-error) while a default may be pending, runs started and ended
 * (Idle or finished) on either instrument and a finished msg of an earlier run, time passing (fake clock), redeploys
 * with and without a rule edit mid-ladder (a step's answer or mode changed), and Node-RED restarts (a persistent
 * context store).
 *
 * The model (README, "error policy", "Recovery ladders", "Rule identity"; review63 for the last two points):
 * - the first matching rule decides; the n-th distinct error matching it in the scope (its instrument's run, else the
 *   clock hour) gets step n (the last step every later one); the same error raised again keeps its step; a run of the
 *   OTHER instrument, a finished msg of an earlier run, a redeploy, a rule edit of steps and a restart reset nothing;
 * - manual: one step notifies (output 1), a ladder's manual step escalates (outputs 1 and 3); walk-away answers at
 *   once when the error offers the answer, else it is refused (output 3, nothing sent); semi-automatic notifies with a
 *   deadline and answers at the deadline unless resolved, answered or its rule's step changed its answer or became
 *   manual; an answer the error does not offer escalates at once;
 * - each instrument receives exactly the answers of the model, at most one per error, never another instrument's;
 * - an error of the other instrument reaches the other policy's output 1 once (msg.policy.otherInstrument) and
 *   nothing else;
 * - nothing reaches Catch nodes (no answer is refused or found answered already).
 * Found: an error of the other instrument answered through this policy's instrument (c0413e5), a semi-automatic
 * default the error does not offer promised and escalated only at its deadline (bca4168), an error raised again after
 * its run ended taking the new run's first step (fd937ce).
 * review69: msg.instrument is drawn as other lh-server nodes of the instrument may spell it (loopback alias, letter
 * case, trailing slash): an own error so spelled is answered as the policy's own, never notified as another's.
 * A few drawn cases per run (< 15 s); the seed is printed; LH_SEED replays, LH_CASES sequences (default 2).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { Simulator } from '../../src/simulator';
import { recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, runtimeSettings, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;
type Clock = ReturnType<typeof FakeTimers.install>;
type Mode = 'manual' | 'semi-automatic' | 'walk-away';

const CASES = Math.max(1, Number(process.env.LH_CASES) || 2);
const STEPS = 24;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
const RESPONSES = ['Retry', 'Abort', 'Skip'] as const;
const TITLES = ['Clot detected', 'Door open', 'Tip not found'] as const;
const SEVERITIES = ['Warning', 'Error', 'Fatal'] as const;
const RANK: Record<string, number> = { Warning: 1, Error: 2, Fatal: 3 };

interface Step {
  mode: Mode;
  answer: string;
  delay: number;
}
interface Rule {
  id: string;
  pattern: string;
  minSeverity: string;
  steps: Step[];
}
interface ModelError {
  inst: number;
  id: string;
  record: Msg;
  offered: string[];
  state: 'pending' | 'resolved' | 'answered';
  /** the decision kept for it (its step): the same error raised again keeps it */
  decided?: { rule: string; step: number };
  pending?: { deadline: number; answer: string; rule: string; step: number };
}
interface Scope {
  run: string | null;
  ladders: Map<string, { next: number; seen: Map<string, number> }>;
}

/** Lets real I/O run (setTimeout and Date are faked) until `check` holds, at most `ms` of real time. */
async function settled(check: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setImmediate(r));
}

function drawRules(rand: Rng): Rule[] {
  const n = rand.int(1, 3);
  return Array.from({ length: n }, (_, i) => ({
    id: `r${i}`,
    pattern: rand.pick(['', 'Clot', 'Door|Tip', 'not found']),
    minSeverity: rand.pick(['', 'Warning', 'Error', 'Fatal']),
    steps: Array.from({ length: rand.int(1, 3) }, () => drawStep(rand)),
  }));
}

function drawStep(rand: Rng): Step {
  const mode = rand.pick(['manual', 'semi-automatic', 'walk-away'] as const);
  return { mode, answer: mode === 'manual' ? '' : rand.pick(RESPONSES), delay: rand.pick([10, 30, 90]) };
}

function matches(rule: Rule, title: string, severity: string): boolean {
  if (rule.minSeverity !== '' && RANK[severity] < RANK[rule.minSeverity]) return false;
  return rule.pattern === '' || new RegExp(rule.pattern, 'i').test(title);
}

describe('review: error policies and ladders over two instruments, model-based', function () {
  this.timeout(60_000 + CASES * STEPS * 2000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const other = new Simulator({});
  before(async () => other.start());
  after(async () => other.stop());
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    stopRecording();
    other.reset();
    runtimeSettings({ contextStorage: undefined });
  });

  it(`every answer and every output is the model's (seed ${SEED}; LH_SEED to replay, LH_CASES to extend)`, async function () {
    console.log(`      model seed: LH_SEED=${SEED} LH_CASES=${CASES}`);
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    const rand = new Rng(SEED);
    for (let c = 0; c < CASES; c++) await sequence(rand, c);
  });

  async function sequence(rand: Rng, c: number): Promise<void> {
    const sims = [sim, other];
    const rules = drawRules(rand);
    const s1 = serverFlow(sim, { withB: false });
    const s2 = serverFlow(other, { id: 'server2', withB: false });
    const credentials = { ...s1.credentials, ...s2.credentials };
    const flow = (): Msg[] => [
      ...s1.nodes,
      ...s2.nodes,
      ...[0, 1].flatMap((i) => [
        {
          id: `policy${i}`,
          type: 'lh-error-policy',
          server: i === 0 ? 'server' : 'server2',
          rules: structuredClone(rules),
          store: 'keep',
          wires: [[`notify${i}`], [`auto${i}`], [`escalate${i}`]],
        },
        { id: `notify${i}`, type: 'helper' },
        { id: `auto${i}`, type: 'helper' },
        { id: `escalate${i}`, type: 'helper' },
        { id: `answer${i}`, type: 'lh-answer-error', server: i === 0 ? 'server' : 'server2', selectedResponse: '', wires: [[]] },
      ]),
      { id: 'catcher', type: 'catch', scope: ['policy0', 'policy1'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ];
    await loadFlow(flow(), credentials);
    await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
    await helper.setFlows(flow(), 'full', credentials);
    // an hour that the sequence does not leave (the hour is the scope of counts while no run is active)
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 5, 10, 0, 30) });

    const outs = [0, 1].map((i) => ({
      notify: recordDeliveries(`notify${i}`),
      auto: recordDeliveries(`auto${i}`),
      escalate: recordDeliveries(`escalate${i}`),
    }));
    const caught = recordDeliveries('caught');
    // review69: msg.instrument as another lh-server node of the same instrument spells it (a loopback alias, letter
    // case, a trailing slash): still that instrument's; `model` marks whose error it is for the checks below
    const spell = (url: string): string => {
      const u = new URL(url);
      const host = rand.pick([u.hostname, 'localhost', '127.0.0.1', '[::1]']);
      const spelled = `${u.protocol}//${host}:${u.port}${u.pathname.replace(/\/+$/, '')}`;
      return rand.pick([spelled, spelled.toUpperCase(), `${spelled}/`]);
    };
    const instrumentOf = (i: number): Msg => ({ name: `sim${i}`, baseUrl: spell(sims[i].baseUrl), instrumentUrl: '', model: i });
    const scopes: Scope[] = [0, 1].map(() => ({ run: null, ladders: new Map() }));
    const errors: ModelError[] = [];
    const expected: string[][] = [[...answersSent(sim).map(put)], [...answersSent(other).map(put)]];
    const trace: string[] = [`rules ${JSON.stringify(rules)}`];
    let n = 0;
    let runs = 0;
    const lastRun: string[] = ['', ''];
    // what each policy's outputs must have received by now (counts per output), and the otherInstrument notes
    const want = [0, 1].map(() => ({ notify: 0, auto: 0, escalate: 0 }));

    function put(b: Msg): string {
      return `${String(b.id)}:${String(b.selectedResponse)}`;
    }
    const sent = (i: number): string[] => answersSent(sims[i]).map(put);
    const deliver = (msg: Msg): void => {
      for (const i of [0, 1]) helper.getNode(`policy${i}`).receive(structuredClone(msg));
    };

    /** The step of the first matching rule for a new error on instrument `i` (the ladder moves on). */
    function decide(e: ModelError): void {
      const title = String(e.record.title);
      const severity = String(e.record.severity);
      const rule = rules.find((r) => matches(r, title, severity));
      const mine = want[e.inst];
      want[1 - e.inst].notify++; // the other policy: notified once, as another instrument's
      if (!rule) {
        mine.notify++;
        return;
      }
      const scope = scopes[e.inst];
      let ladder = scope.ladders.get(rule.id);
      if (!ladder) scope.ladders.set(rule.id, (ladder = { next: 0, seen: new Map() }));
      let occ = ladder.seen.get(e.id);
      if (occ === undefined) ladder.seen.set(e.id, (occ = ladder.next++));
      const number = Math.min(occ, rule.steps.length - 1) + 1;
      e.decided = { rule: rule.id, step: number };
      act(e, rule, number);
    }

    function act(e: ModelError, rule: Rule, number: number): void {
      const step = rule.steps[number - 1];
      const mine = want[e.inst];
      if (step.mode === 'manual') {
        mine.notify++;
        if (rule.steps.length > 1) mine.escalate++;
      } else if (!e.offered.includes(step.answer)) {
        // walk-away: refused before anything is sent; semi-automatic: escalated at once
        if (step.mode === 'semi-automatic') mine.notify++;
        mine.escalate++;
      } else if (step.mode === 'walk-away') {
        mine.auto++;
        e.state = 'answered';
        expected[e.inst].push(`${e.id}:${step.answer}`);
      } else {
        mine.notify++;
        e.pending = { deadline: Date.now() + step.delay * 1000, answer: step.answer, rule: rule.id, step: number };
      }
    }

    const open = (): ModelError[] => errors.filter((e) => e.state === 'pending');

    for (let stepNo = 0; stepNo < STEPS; stepNo++) {
      const op = rand.weighted({
        raise: 6,
        again: 2,
        resolve: 2,
        person: 2,
        runStart: 2,
        runEnd: 2,
        oldFinished: 1,
        tick: 5,
        redeploy: 1,
        edit: 2,
        restart: 1,
      });
      const i = rand.below(2);
      const pendingNow = open();
      if (op === 'raise' || ((op === 'again' || op === 'resolve' || op === 'person') && pendingNow.length === 0)) {
        const offered = RESPONSES.filter(() => rand.chance(0.6));
        if (offered.length === 0) offered.push('Abort');
        const title = rand.pick(TITLES);
        const severity = rand.pick(SEVERITIES);
        const id = `c${c}-${n++}`;
        const record = sims[i].injectPendingError({ id, title, severity, responses: [...offered] }) as unknown as Msg;
        const e: ModelError = { inst: i, id, record, offered: [...offered], state: 'pending' };
        errors.push(e);
        trace.push(`raise ${id} on ${i}: ${severity} "${title}" offers ${offered.join('/')}`);
        decide(e);
        deliver({ payload: record, source: 'A', event: 'raised', errorId: id, instrument: instrumentOf(i) });
      } else if (op === 'again') {
        const e = rand.pick(pendingNow);
        trace.push(`raise again ${e.id} on ${e.inst}`);
        want[1 - e.inst].notify++;
        if (e.pending) want[e.inst].notify++;
        else if (!e.decided) want[e.inst].notify++;
        else {
          const rule = rules.find((r) => r.id === e.decided?.rule);
          if (rule) act(e, rule, e.decided.step);
          else want[e.inst].notify++;
        }
        deliver({ payload: e.record, source: 'A', event: 'raised', errorId: e.id, instrument: instrumentOf(e.inst) });
      } else if (op === 'resolve') {
        const e = rand.pick(pendingNow);
        sims[e.inst].resolvePendingError(e.id);
        e.state = 'resolved';
        e.pending = undefined;
        trace.push(`resolve ${e.id} on ${e.inst}`);
        want[0].notify++;
        want[1].notify++;
        deliver({ payload: e.record, source: 'A', event: 'resolved', errorId: e.id, instrument: instrumentOf(e.inst) });
      } else if (op === 'person') {
        const e = rand.pick(pendingNow);
        const answer = rand.pick(e.offered);
        e.state = 'answered';
        e.pending = undefined;
        expected[e.inst].push(`${e.id}:${answer}`);
        trace.push(`person answers ${e.id} on ${e.inst}: ${answer}`);
        helper.getNode(`answer${e.inst}`).receive({ payload: structuredClone(e.record), selectedResponse: answer });
      } else if (op === 'runStart' || op === 'runEnd' || op === 'oldFinished') {
        const scope = scopes[i];
        const instrument = instrumentOf(i);
        if (op === 'runStart') {
          const startTime = new Date(Date.now() + runs++).toISOString();
          const key = `p${i}|${startTime}`;
          if (scope.run !== key) scope.ladders.clear();
          if (scope.run) lastRun[i] = scope.run;
          scope.run = key;
          trace.push(`run ${key} starts on ${i}`);
          deliver({
            topic: 'state',
            state: 'Running',
            payload: { protocolRunState: 'Running', protocolId: `p${i}`, startTime },
            instrument,
          });
        } else if (op === 'runEnd') {
          const idle = rand.chance(0.5);
          trace.push(`run ends on ${i} (${idle ? 'Idle' : 'finished'})`);
          if (scope.run) {
            lastRun[i] = scope.run;
            const [protocolId, startTime] = scope.run.split('|');
            scope.run = null;
            scope.ladders.clear();
            deliver(
              idle
                ? { topic: 'state', state: 'Idle', payload: { protocolRunState: 'Idle' }, instrument }
                : { topic: 'finished', payload: { protocolId, startTime, runResult: 'Success' }, instrument },
            );
          } else deliver({ topic: 'state', state: 'Idle', payload: { protocolRunState: 'Idle' }, instrument });
        } else if (lastRun[i] !== '' && lastRun[i] !== scope.run) {
          const [protocolId, startTime] = lastRun[i].split('|');
          trace.push(`finished msg of the earlier run ${lastRun[i]} on ${i}`);
          deliver({ topic: 'finished', payload: { protocolId, startTime, runResult: 'Failed' }, instrument });
        }
      } else if (op === 'tick') {
        const ms = rand.pick([5, 15, 40]) * 1000;
        trace.push(`${ms / 1000} s pass`);
        for (let t = 0; t < ms; t += 1000) {
          await clock.tickAsync(1000);
          for (const e of open())
            if (e.pending && e.pending.deadline <= Date.now()) {
              expected[e.inst].push(`${e.id}:${e.pending.answer}`);
              want[e.inst].auto++;
              e.state = 'answered';
              e.pending = undefined;
            }
          await settled(() => sent(0).length >= expected[0].length && sent(1).length >= expected[1].length);
        }
      } else if (op === 'edit') {
        const rule = rand.pick(rules);
        const k = rand.below(rule.steps.length);
        const before = rule.steps[k];
        const after = rand.chance(0.5) ? { ...before, answer: rand.pick(RESPONSES) } : drawStep(rand);
        if (after.mode === 'manual') after.answer = '';
        rule.steps[k] = after;
        trace.push(`redeploy: rule ${rule.id} step ${k + 1} now ${JSON.stringify(after)}`);
        // a default of that step stands when the step still answers the same (its mode semi/walk-away may change)
        for (const e of open())
          if (e.pending && e.pending.rule === rule.id && e.pending.step === k + 1)
            if (after.mode === 'manual' || after.answer !== e.pending.answer) e.pending = undefined;
        await helper.setFlows(flow(), 'full', credentials);
      } else if (op === 'redeploy') {
        trace.push('redeploy');
        await helper.setFlows(flow(), 'full', credentials);
      } else {
        trace.push('restart');
        restartMemory();
        await helper.setFlows(flow(), 'full', credentials);
      }
      await settled(() => sent(0).length >= expected[0].length && sent(1).length >= expected[1].length);
      const total = (): number => want.reduce((a, w) => a + w.notify + w.auto + w.escalate, 0);
      const got = (): number => outs.reduce((a, o) => a + o.notify.length + o.auto.length + o.escalate.length, 0);
      await settled(() => got() >= total());
      for (let k = 0; k < 10; k++) await clock.tickAsync(0);
      await settled(() => false, 20);
      try {
        for (const x of [0, 1]) {
          assert.deepEqual([...sent(x)].sort(), [...expected[x]].sort(), `answers instrument ${x} received`);
          const o = outs[x];
          assert.deepEqual(
            { notify: o.notify.length, auto: o.auto.length, escalate: o.escalate.length },
            want[x],
            `outputs of the policy of instrument ${x}`,
          );
          for (const m of o.notify) {
            const named = m.instrument as Msg | undefined;
            if (m.event === 'raised' && named?.model !== x)
              assert.equal(
                (m.policy as Msg).otherInstrument,
                named?.baseUrl,
                'an error of the other instrument is only notified',
              );
            else if (m.event === 'raised')
              assert.equal((m.policy as Msg).otherInstrument, undefined, `its own error (spelled ${String(named?.baseUrl)})`);
          }
        }
        assert.deepEqual(
          caught.map((m) => (m.error as Msg).message),
          [],
        );
      } catch (err) {
        throw new Error(
          `LH_SEED=${SEED}, sequence ${c}, step ${stepNo}:\n${trace.slice(-25).join('\n')}\n${(err as Error).message}`,
        );
      }
    }
    clock.uninstall();
    clock = undefined;
    stopRecording();
    await helper.unload();
    restartMemory();
  }
});
