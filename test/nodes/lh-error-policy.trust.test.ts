/**
 * Issue 29, findings 8, 9, 10 and 12, as the review found them: the error policy in a real Node-RED runtime against
 * the simulator, fed the msgs lh-run-watch and lh-error-poll send.
 */
import assert from 'node:assert/strict';
import path from 'path';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper } from '../support/runtime';
import { recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';
import { loadWithPage } from './lh-answer-page.support';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

const built = (...p: string[]): string => path.resolve(__dirname, '..', '..', 'nodes', 'nodes', ...p);
const runScope = require(built('runs', 'run-scope.js')) as {
  addRunRule(instrument: string, rule: Msg): void;
  similarity(record: Msg): Msg;
};

function restartState(): void {
  restartMemory();
}

describe('lh-error-policy: trust fixes of issue 29 (8, 9, 10, 12)', function () {
  this.timeout(20000);
  const sim = useInstrument({ afterEach: restartState });
  let out: { auto: Msg[]; escalate: Msg[]; notify: Msg[] } = { auto: [], escalate: [], notify: [] };

  /** lh-run-watch's `msg.instrument` for this simulator (what instrumentInfo() makes of the lh-server node). */
  const own = (): Msg => ({ name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl });
  const other = { name: 'Y', baseUrl: 'http://127.0.0.1:1', instrumentUrl: 'https://127.0.0.1:2' };

  const state = (start: string, instrument: Msg = own()): Msg => ({
    topic: 'state',
    state: 'Running',
    previousState: 'Loading',
    payload: { protocolRunState: 'Running', protocolId: 7, protocolName: 'P7', startTime: start },
    instrument,
  });
  const finished = (start: string, instrument: Msg = own()): Msg => ({
    topic: 'finished',
    result: 'completed',
    payload: { result: 'completed', protocolId: 7, protocolName: 'P7', startTime: start, states: ['Running'] },
    instrument,
  });

  function flow(rules: Msg[]): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = bServerFlow(sim);
    return {
      nodes: [
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
    const f = flow(rules);
    await loadWithPage(f.nodes, f.credentials);
    sim.state.handlers.add('nodered1');
    collectOutputs();
  }
  async function redeploy(rules: Msg[]): Promise<void> {
    const f = flow(rules);
    await helper.setFlows(f.nodes, 'full', f.credentials);
    collectOutputs();
  }
  const policy = (): { receive(msg: Msg): void } => helper.getNode('policy') as unknown as { receive(msg: Msg): void };
  const submissions = (): number[] => recoverySubmissions(sim).map((r) => Number((r.body as Msg).selectedActionId));

  /** Raises a new B error; resolves with what the policy did: the step answered, 'escalated', or 'notified'. */
  async function raise(seed: Msg = {}): Promise<string> {
    const error = sim.injectInstrumentError({ title: 'Clot detected', ...seed }) as unknown as Msg;
    const before = { auto: out.auto.length, escalate: out.escalate.length, notify: out.notify.length };
    policy().receive({ payload: error, source: 'B', event: 'raised', notification: 'sim: clot' });
    await until(
      () => out.auto.length > before.auto || out.escalate.length > before.escalate || out.notify.length > before.notify,
      'what the policy did',
      5000,
    );
    if (out.auto.length > before.auto) {
      const p = out.auto[out.auto.length - 1].payload as Msg;
      return p.runRule ? 'run rule' : `step ${String(p.step)}`;
    }
    if (out.escalate.length > before.escalate) return 'escalated';
    // a walk-away answer goes out after the notification (output 1 first): wait for it when one is on its way
    const policyOf = out.notify[out.notify.length - 1].policy as Msg;
    return policyOf.mode === 'manual' ? 'notified' : `scheduled ${String(policyOf.step)}`;
  }

  const ladder = [
    { mode: 'walk-away', answer: '1', delay: 0 }, // Retry
    { mode: 'walk-away', answer: '3', delay: 0 }, // Skip
    { mode: 'manual', answer: '', delay: 0 }, // a person
  ];
  const clots = { source: 'B', minSeverity: '', pattern: 'clot', code: '', steps: ladder };

  it("9: another instrument's run starting or ending leaves this instrument's ladder alone", async function () {
    await load([clots]);
    policy().receive(state('2026-11-24T10:00:00Z'));
    assert.equal(await raise(), 'step 1');
    policy().receive(state('2026-11-24T10:05:00Z', other)); // Y's run starts
    assert.equal(await raise(), 'step 2');
    policy().receive(finished('2026-11-24T10:05:00Z', other)); // and ends
    policy().receive({ topic: 'state', state: 'Idle', payload: { protocolRunState: 'Idle' }, instrument: other });
    assert.equal(await raise(), 'escalated', 'the third clot of this run goes to a person');
    assert.equal(await raise(), 'escalated');
    assert.deepEqual(submissions(), [1, 3], 'Retry, Skip: no third automatic answer');
  });

  it("10: the old run's finished, arriving after the new run's state (Idle missed), does not end the new run", async function () {
    await load([clots]);
    policy().receive(state('2026-11-24T10:00:00Z'));
    assert.equal(await raise(), 'step 1');
    // the next run started between two polls: run watch sends the new run's state, then the old run's finished
    policy().receive(state('2026-11-24T11:00:00Z'));
    policy().receive(finished('2026-11-24T10:00:00Z'));
    assert.equal(await raise(), 'step 1', 'the new run starts at step 1');
    assert.equal(await raise(), 'step 2');
    assert.equal(await raise(), 'escalated', 'Retry, Skip, person');
    policy().receive(finished('2026-11-24T11:00:00Z')); // its own end
    assert.equal(await raise(), 'step 1');
  });

  it("8: a person's tick never answers a Fatal error, nor one the lab's rules send to a person", async function () {
    await load([
      { source: 'any', minSeverity: 'Fatal', pattern: '', code: '', steps: [{ mode: 'manual' }] },
      { source: 'B', minSeverity: '', pattern: 'door', code: '', steps: [{ mode: 'manual' }] },
    ]);
    policy().receive(state('2026-11-24T10:00:00Z'));
    const instrument = `${sim.baseUrl.replace(/\/+$/, '')}|${sim.instrumentUrl.replace(/\/+$/, '')}`;
    const tick = (record: Msg): void =>
      runScope.addRunRule(instrument, {
        source: 'B',
        match: runScope.similarity(record),
        answer: '1',
        by: 'ann',
        at: Date.now(),
        errorKey: String(record.uuid),
      });
    // the operator answered an ordinary "Liquid level not detected" with Retry and ticked "the same for similar errors"
    tick({ uuid: 'first', title: 'Liquid level not detected', severity: 'Error' });
    assert.equal(await raise({ title: 'Liquid level not detected', severity: 'Fatal' }), 'notified', 'rule 1 (Fatal) decides');
    assert.equal(await raise({ title: 'Liquid level not detected', severity: 'Error' }), 'run rule', 'the tick answers alike');
    assert.equal(await raise({ title: 'Liquid level not detected', severity: 'Warning' }), 'notified', 'not similar');
    // a tick on a door error: rule 2 sends door errors to a person, and that wins
    tick({ uuid: 'door1', title: 'Door open', severity: 'Error' });
    assert.equal(await raise({ title: 'Door open', severity: 'Error' }), 'notified');
    assert.deepEqual(submissions(), [1], 'one automatic answer: the ordinary error');
  });

  it('12: a rule added above mid-run keeps the counts of the rules below (saved rules without ids, and with)', async function () {
    const door = { source: 'B', minSeverity: '', pattern: 'door', code: '', steps: [{ mode: 'manual' }] };
    const cases: [Msg[], Msg[]][] = [
      [[clots], [door, clots]],
      [
        [{ ...clots, id: 'clots' }],
        [
          { ...door, id: 'door' },
          { ...clots, id: 'clots' },
        ],
      ],
    ];
    for (const [before, after] of cases) {
      await load(before);
      policy().receive(state('2026-11-24T10:00:00Z'));
      assert.equal(await raise(), 'step 1');
      assert.equal(await raise(), 'step 2');
      await redeploy(after);
      assert.equal(await raise(), 'escalated', 'the 3rd clot goes to a person, as before the edit');
      assert.equal(await raise({ title: 'Door open' }), 'notified', 'the new rule applies');
      await helper.unload();
      restartState();
    }
  });
});
