/**
 * The error policy's recovery ladders and a person's run-scoped answer against the wall clock stepping (an NTP step,
 * a VM resumed): drawn clock histories (steps back and forward of minutes to days, a clock jittering back 1 ms per
 * reading) in a real Node-RED runtime. The ladder's hour (no run active) lasts an hour of elapsed time: a step forward
 * never starts the next hour early (the ladder back at its first, automatic step), a step back never starts one
 * either (nor holds one for the step's length); a choice "the same for similar errors" made after a step back is in
 * force for the run it was made in. LH_SEED / LH_CASES replay or extend the drawn histories.
 */
import assert from 'node:assert/strict';
import path from 'path';

import FakeTimers from '@sinonjs/fake-timers';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const runScope = require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'runs', 'run-scope.js')) as {
  addRunRule(instrument: string, rule: Msg): void;
  similarity(record: Msg): Msg;
};

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const STEPS = 3;

describe('review: error-policy ladders and run-scoped answers after the wall clock steps', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  /** A ladder of manual steps for "clot" errors: each escalates (output 3) naming its step, nothing is sent. */
  const manualLadder = [
    {
      source: 'A',
      minSeverity: '',
      pattern: 'clot',
      code: '',
      steps: Array.from({ length: STEPS }, () => ({ mode: 'manual', answer: '', delay: 0 })),
    },
  ];

  async function load(rules: Msg[]): Promise<{ notify: Msg[]; escalate: Msg[]; auto: Msg[]; instrumentKey: string }> {
    const server = bServerFlow(sim);
    await loadWithPage(
      [
        ...server.nodes,
        {
          id: 'policy',
          type: 'lh-error-policy',
          version: 2,
          server: 'server',
          rules,
          wires: [['notify'], ['auto'], ['escalate']],
        },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
      ],
      server.credentials,
    );
    const instrumentKey = (helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey;
    return {
      notify: collect(helper.getNode('notify')),
      escalate: collect(helper.getNode('escalate')),
      auto: collect(helper.getNode('auto')),
      instrumentKey,
    };
  }
  const receive = (msg: Msg): void => (helper.getNode('policy') as unknown as { receive(m: Msg): void }).receive(msg);

  it(`a new error takes the step of its rank in its hour of elapsed time, whatever the wall clock did (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    const start = Date.parse('2026-11-24T10:00:00.000Z') + rng.below(HOUR);
    clock = FakeTimers.install({ toFake: ['Date', 'performance'], now: start });
    const { escalate } = await load(manualLadder);
    // the model: the hour scope by time elapsed (ticks), never by what the wall clock reads
    let ticked = 0;
    const hour = (): number => Math.floor((start + ticked) / HOUR);
    const newInHour = new Map<number, number>();
    let id = 0;
    for (let c = 0; c < CASES; c++) {
      const trace: string[] = [];
      for (let i = 0; i < 14; i++) {
        const what = rng.weighted({ raise: 5, back: 1, forward: 1, jitter: 2, wait: 1 });
        if (what === 'raise') {
          const record = { id: `e${id++}`, title: 'Clot detected', severity: 'Error', timestamp: new Date().toISOString() };
          const n = (newInHour.get(hour()) ?? 0) + 1;
          newInHour.set(hour(), n);
          const before = escalate.length;
          receive({ payload: record, source: 'A', event: 'raised' });
          await until(() => escalate.length > before, 'the escalation', 5000);
          const step = Number((escalate[before].policy as Msg).step);
          trace.push(`raise: step ${step}`);
          assert.equal(step, Math.min(n, STEPS), `seed ${SEED} case ${c}: ${trace.join(', ')}`);
        } else if (what === 'wait') {
          const ms = rng.int(0, 40 * MIN);
          clock.tick(ms);
          ticked += ms;
          trace.push(`wait ${ms} ms`);
        } else {
          const by =
            what === 'jitter' ? -1 : (what === 'back' ? -1 : 1) * rng.pick([MIN, 10 * MIN, HOUR, 6 * HOUR, DAY, 3 * DAY]);
          clock.setSystemTime(Date.now() + by);
          trace.push(`${what} ${by} ms`);
        }
      }
    }
  });

  for (const back of [5 * MIN, HOUR, 3 * DAY]) {
    it(`a person's "the same for similar errors" chosen ${back / MIN} min after the clock went back applies in its run`, async function () {
      clock = FakeTimers.install({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-24T10:20:00.000Z') });
      // no rule of the lab's matches: the person's choice answers
      const { auto, notify, instrumentKey } = await load([{ ...manualLadder[0], pattern: 'no such error' }]);
      sim.state.handlers.add('nodered1');
      const own = { name: 'sim', baseUrl: sim.baseUrl.replace(/\/+$/, ''), instrumentUrl: sim.instrumentUrl.replace(/\/+$/, '') };
      receive({
        topic: 'state',
        state: 'Running',
        payload: { protocolRunState: 'Running', protocolId: 7, protocolName: 'P7', startTime: '2026-11-24T10:19:00.000Z' },
        instrument: own,
      });
      clock.tick(MIN);
      clock.setSystemTime(Date.now() - back);
      const chosenOn = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
      // what the answer page does when a person ticks the box and answers Retry
      runScope.addRunRule(instrumentKey, {
        source: 'A',
        match: runScope.similarity(chosenOn as unknown as Msg),
        answer: 'Retry',
        by: 'ana',
        at: Date.now(),
        errorKey: chosenOn.id,
      });
      sim.resolvePendingError(chosenOn.id);
      clock.tick(MIN);
      const next = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
      receive({ payload: next, source: 'A', event: 'raised' });
      // answered by the person's choice (output 2), or, were it taken for one made before the run, notified (output 1)
      const answered = (): Msg | undefined => auto.find((m) => (m.payload as Msg).errorKey === next.id);
      await until(() => !!answered() || notify.some((m) => (m.payload as Msg).id === next.id), 'the decision', 10_000);
      const sent = answered();
      assert.ok(sent, 'the error was only notified: the choice made after the clock went back was not in force');
      assert.equal(((sent.payload as Msg).runRule as Msg).by, 'ana', 'answered by the run-scoped rule');
      assert.deepEqual(
        answersSent<Msg>(sim).map((b) => b.selectedResponse),
        ['Retry'],
      );
    });
  }
});
