import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage, runtimeSettings } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';
import { loadWithPage } from './lh-answer-page.support';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type Clock = ReturnType<typeof FakeTimers.install>;

function restartState(): void {
  restartMemory();
}

/** Lets the policy's queued write to the context store happen (it waits for setImmediate). */
async function flushed(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

/** A message of lh-run-watch's first output: the run's state changed. */
function runState(state: string, protocolId: number, startTime: string | null): Msg {
  return { topic: 'state', state, payload: { protocolRunState: state, protocolId, protocolName: `P${protocolId}`, startTime } };
}

describe('lh-error-policy: recovery ladders', function () {
  this.timeout(20000);
  const sim = useInstrument({ afterEach: restartState });
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  const submissions = (): Msg[] => recoverySubmissions(sim).map((r) => r.body as Msg);
  const puts = (): Msg[] => answersSent<Msg>(sim);

  function flowOf(rules: Msg[], store = ''): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = bServerFlow(sim);
    const onTab = (n: Msg): Msg => ({ ...n, z: 'tab' });
    return {
      nodes: [
        { id: 'tab', type: 'tab', label: 'ladders' },
        ...server.nodes,
        onTab({
          id: 'policy',
          type: 'lh-error-policy',
          version: 2,
          server: 'server',
          rules,
          store,
          wires: [['notify'], ['auto'], ['escalate']],
        }),
        onTab({ id: 'notify', type: 'helper' }),
        onTab({ id: 'auto', type: 'helper' }),
        onTab({ id: 'escalate', type: 'helper' }),
      ],
      credentials: server.credentials,
    };
  }

  function collectOutputs(): void {
    out = {
      auto: collect(helper.getNode('auto')),
      escalate: collect(helper.getNode('escalate')),
      notify: collect(helper.getNode('notify')),
    };
  }

  async function load(rules: Msg[]): Promise<void> {
    const f = flowOf(rules);
    await loadWithPage(f.nodes, f.credentials);
    sim.state.handlers.add('nodered1');
    collectOutputs();
  }
  let out: { auto: Msg[]; escalate: Msg[]; notify: Msg[] } = { auto: [], escalate: [], notify: [] };

  const policy = (): { receive(msg: Msg): void } => helper.getNode('policy') as unknown as { receive(msg: Msg): void };

  /** Raises a new B error and waits until the policy answered it (output 2) or escalated it (output 3). */
  async function raiseB(seed: Msg = {}): Promise<{ error: Msg; outcome: 'answered' | 'escalated'; msg: Msg }> {
    const error = sim.injectInstrumentError(seed) as unknown as Msg;
    const before = out.auto.length + out.escalate.length;
    policy().receive({ payload: error, source: 'B', event: 'raised', notification: 'sim: Error' });
    await until(() => out.auto.length + out.escalate.length > before, 'an answer or an escalation');
    const answered = out.auto.find((m) => (m.payload as Msg).errorKey === error.uuid);
    if (answered) return { error, outcome: 'answered', msg: answered };
    return { error, outcome: 'escalated', msg: out.escalate[out.escalate.length - 1] };
  }

  const ladder = [
    { mode: 'walk-away', answer: '1', delay: 0 }, // 1st time: Retry
    { mode: 'walk-away', answer: '3', delay: 0 }, // 2nd time: Skip this step
    { mode: 'manual', answer: '', delay: 0 }, // 3rd time and later: a person
  ];

  it('retry, then skip, then escalate within one run; a new run starts at the first step again', async function () {
    await load([{ source: 'B', minSeverity: '', pattern: 'clot', code: '', steps: ladder }]);
    policy().receive(runState('Running', 7, '2026-11-24T10:00:00.000Z'));

    const first = await raiseB();
    assert.equal(first.outcome, 'answered');
    assert.equal((first.msg.payload as Msg).step, 1);
    const second = await raiseB();
    assert.equal(second.outcome, 'answered');
    assert.equal((second.msg.payload as Msg).step, 2);
    const third = await raiseB();
    assert.equal(third.outcome, 'escalated');
    assert.match(String(third.msg.reason), /rule 1, step 3 of 3 \(manual\): a person must answer/);
    assert.deepEqual(
      { ...(third.msg.policy as Msg) },
      {
        mode: 'manual',
        rule: 1,
        ruleId: (third.msg.policy as Msg).ruleId,
        step: 3,
        steps: 3,
        scope: 'run',
        run: '7|2026-11-24T10:00:00.000Z',
      },
    );
    assert.match(String((third.msg.policy as Msg).ruleId), /^r[0-9a-f]{16}$/, "the rule's id, derived from what it matches");
    const fourth = await raiseB();
    assert.equal(fourth.outcome, 'escalated', 'the last step answers every later error');
    assert.deepEqual(
      submissions().map((b) => b.selectedActionId),
      [1, 3],
      'exactly retry then skip went out',
    );

    // the run ends; the next run's first error is retried again
    policy().receive({ topic: 'finished', result: 'failed', payload: { result: 'failed' } });
    policy().receive(runState('Running', 7, '2026-11-24T11:00:00.000Z'));
    const again = await raiseB();
    assert.equal(again.outcome, 'answered');
    assert.equal((again.msg.payload as Msg).step, 1);
    assert.deepEqual(
      submissions().map((b) => b.selectedActionId),
      [1, 3, 1],
    );
  });

  it('a redeploy and a restart of Node-RED in the middle of a run keep the counts (persistent context store)', async function () {
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    try {
      const f = flowOf([{ source: 'B', minSeverity: '', pattern: '', code: '', steps: ladder }], 'keep');
      await loadWithPage(f.nodes, f.credentials);
      await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
      await helper.setFlows(f.nodes, 'full', f.credentials);
      sim.state.handlers.add('nodered1');
      collectOutputs();
      policy().receive(runState('Running', 9, '2026-11-24T10:00:00.000Z'));
      assert.equal(((await raiseB()).msg.payload as Msg).step, 1);
      await flushed(); // the write to the context store (one per burst, on the next turn)

      await helper.setFlows(f.nodes, 'full', f.credentials); // a full redeploy
      collectOutputs();
      assert.equal(((await raiseB()).msg.payload as Msg).step, 2);
      await flushed();

      restartState(); // module state gone; the context store keeps the run and its counts
      await helper.setFlows(f.nodes, 'full', f.credentials);
      collectOutputs();
      const third = await raiseB();
      assert.equal(third.outcome, 'escalated');
      assert.equal((third.msg.policy as Msg).step, 3);
    } finally {
      runtimeSettings({ contextStorage: undefined });
    }
  });

  it('with a real run watch wired in: the ladder counts per simulated run, and the next run starts over', async function () {
    const f = flowOf([{ source: 'B', minSeverity: '', pattern: '', code: '', steps: ladder }]);
    const states: Msg[] = [];
    f.nodes.push(
      {
        id: 'watch',
        type: 'lh-run-watch',
        z: 'tab',
        server: 'server',
        interval: '0.2',
        progressInterval: '0',
        wires: [['policy', 'states'], ['policy', 'states'], [], []],
      },
      { id: 'states', type: 'helper', z: 'tab' },
    );
    sim.runs.setSpeed(20);
    await loadWithPage(f.nodes, f.credentials);
    sim.state.handlers.add('nodered1');
    collectOutputs();
    (helper.getNode('states') as unknown as { on(e: string, l: (m: Msg) => void): void }).on('input', (m) => states.push(m));
    const startRun = async (): Promise<void> => {
      sim.runs.create({ protocolId: 1 }, 'admin');
      await until(() => sim.runs.state === 'Loading', 'Loading');
      sim.runs.loadComplete({ protocolId: 1 });
      await until(() => states[states.length - 1]?.state === 'Running', 'the watch reports Running', 10000);
    };
    await startRun();
    const first = await raiseB();
    assert.equal((first.msg.payload as Msg).step, 1);
    assert.equal((await raiseB()).outcome, 'answered');
    assert.equal((await raiseB()).outcome, 'escalated');
    sim.runs.abort();
    await until(() => states.some((m) => m.topic === 'finished'), 'the watch reports the end of the run', 10000);
    await startRun();
    const next = await raiseB();
    assert.equal(next.outcome, 'answered');
    assert.equal((next.msg.payload as Msg).step, 1, 'a new run starts at the first step');
  });

  it('an error raised again keeps its step; the run counts once its start time appears, without starting over', async function () {
    await load([
      {
        source: 'B',
        minSeverity: '',
        pattern: '',
        code: '',
        steps: [{ mode: 'manual' }, { mode: 'manual' }, { mode: 'manual' }],
      },
    ]);
    const raised = async (error: Msg): Promise<number> => {
      const before = out.notify.length;
      policy().receive({ payload: error, source: 'B', event: 'raised' });
      await until(() => out.notify.length > before, 'the notification');
      return Number((out.notify[out.notify.length - 1].policy as Msg).step);
    };
    policy().receive(runState('Loading', 3, null));
    const error = sim.injectInstrumentError() as unknown as Msg;
    assert.equal(await raised(error), 1);
    policy().receive(runState('Running', 3, '2026-11-24T10:00:00.000Z')); // the same run, now with its start time
    assert.equal(await raised(error), 1, 'the same error keeps step 1');
    assert.equal(await raised(sim.injectInstrumentError() as unknown as Msg), 2);
    assert.equal(await raised(error), 1, 'still step 1');
    assert.equal(await raised(sim.injectInstrumentError() as unknown as Msg), 3);
  });

  it('without a run, counts per clock hour (fake clock): the next hour starts at the first step', async function () {
    // the hour passes (Date and the monotonic clock move together): a step of the wall clock alone starts none
    clock = FakeTimers.install({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-24T10:10:00.000Z') });
    await load([
      {
        source: 'A',
        minSeverity: '',
        pattern: '',
        code: '',
        steps: [
          { mode: 'walk-away', answer: 'Retry' },
          { mode: 'walk-away', answer: 'Abort' },
        ],
      },
    ]);
    const answerA = async (): Promise<Msg> => {
      const error = sim.injectPendingError() as unknown as Msg;
      const auto = nextMessage(helper.getNode('auto'));
      policy().receive({ payload: error, source: 'A', event: 'raised' });
      return auto;
    };
    assert.equal(((await answerA()).payload as Msg).step, 1);
    assert.equal(((await answerA()).payload as Msg).step, 2);
    clock.tick(Date.parse('2026-11-24T11:00:00.000Z') - Date.now());
    assert.equal(((await answerA()).payload as Msg).step, 1);
    assert.deepEqual(
      puts().map((b) => b.selectedResponse),
      ['Retry', 'Abort', 'Retry'],
    );
  });

  it("a semi-automatic default never waits longer than the B error's own timeoutSeconds, and says which deadline applies", async function () {
    await load([
      { source: 'B', minSeverity: '', pattern: '', code: '', steps: [{ mode: 'semi-automatic', answer: '', delay: 120 }] },
    ]);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const error = sim.injectInstrumentError({ timeoutSeconds: 30 }) as unknown as Msg;
    const notified = nextMessage(helper.getNode('notify'));
    policy().receive({ payload: error, source: 'B', event: 'raised', notification: 'sim: Error' });
    const n = await notified;
    const policyInfo = n.policy as Msg;
    assert.equal(policyInfo.deadlineBy, 'instrument');
    const wait = Date.parse(String(n.deadline)) - Date.now();
    assert.ok(wait <= 30_000 && wait >= 28_000, `waits ${wait} ms`);
    assert.match(String(n.notification), /\(the instrument's own timeout\), the policy answers: 1 Retry \(default\)$/);
    const auto = nextMessage(helper.getNode('auto'));
    await clock.tickAsync(wait);
    assert.equal((await auto).outcome, 'answered');
    assert.equal(submissions().length, 1);

    // a rule shorter than the instrument's timeout keeps its own
    const short = sim.injectInstrumentError({ timeoutSeconds: 300 }) as unknown as Msg;
    const notified2 = nextMessage(helper.getNode('notify'));
    policy().receive({ payload: short, source: 'B', event: 'raised' });
    assert.equal(((await notified2).policy as Msg).deadlineBy, 'rule');
  });

  it('a step gives the inputs an action requires; a step without a valid value escalates and sends nothing', async function () {
    await load([
      { source: 'B', minSeverity: '', pattern: 'height', code: '', steps: [{ mode: 'walk-away', answer: '2', inputs: '1=3.5' }] },
      {
        source: 'B',
        minSeverity: '',
        pattern: 'range',
        code: '',
        steps: [{ mode: 'walk-away', answer: '2', inputs: { 1: '42' } }],
      },
    ]);
    const ok = await raiseB({ title: 'Clot: new height' });
    assert.equal(ok.outcome, 'answered');
    assert.deepEqual(submissions()[0].inputs, [{ id: 1, value: '3.5' }]);
    assert.deepEqual(sim.state.instrumentErrors.find((e) => e.uuid === ok.error.uuid)?.selectedInputs, [{ id: 1, value: '3.5' }]);

    const bad = await raiseB({ title: 'Clot: out of range' });
    assert.equal(bad.outcome, 'escalated');
    assert.match(
      String(bad.msg.reason),
      /rules\[1\]\.steps\[0\]\.inputs\.1 \(Aspiration height above bottom \(mm\), a number from 0\.5 to 10 mm\) must be/,
    );
    assert.equal(submissions().length, 1, 'nothing was sent for the bad value');
  });

  it("a step without a value takes the action's declared default (the value the instrument suggests)", async function () {
    await load([{ source: 'B', minSeverity: '', pattern: '', code: '', steps: [{ mode: 'walk-away', answer: '2' }] }]);
    const done = await raiseB();
    assert.equal(done.outcome, 'answered');
    assert.deepEqual(submissions()[0].inputs, [{ id: 1, value: '2' }]);
    assert.deepEqual((done.msg.payload as Msg).step, 1);
    assert.equal(submissions().length, 1, 'one submission');
  });
});
