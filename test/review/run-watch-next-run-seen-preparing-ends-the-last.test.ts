/**
 * Review (runs: start, watch, records). lh-run-watch took a run seen being prepared (Scheduling, Scheduled, Loading:
 * no start time yet) for the run it had seen running, when the Idle between them fell between two polls and both were
 * of the same protocol. A run never goes back from Running (or Aborting) to being prepared, but the watch merged them:
 * the run that had ended was not reported while the next one waited at Loading (an operator loading the deck: minutes
 * or hours of silence for a run that was over), and when the next one was aborted there, one finished msg went out
 * for both, with the first run's record and the second's abort in its states (without that record: "aborted" for a
 * run that completed). README: "Output 2: once per finished run".
 */
import assert from 'node:assert/strict';

import { RunScope, runSighting } from '../../src/nodes/runs/run-scope';
import { useInstrument } from '../support/node-suite';
import { recordRunWatch, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const BUSY_MS = 20000;
const T = Date.parse('2026-03-01T10:00:00Z');

describe('lh-run-watch: the next run seen being prepared ends the run seen running (review)', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 20 } });

  it('reports the run that ended when the next one of its protocol shows at Loading, then the next one', async function () {
    this.timeout(60000);
    const quick = sim.addProtocol('Quick');
    // one step of 20 simulated seconds: 1 s at speed 20
    sim.state.protocols
      .get(quick)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 20 });
    // polls only when asked (an input msg): the Idle between the two runs falls between two polls
    const f = runWatchFlow(sim, { interval: '3600', progressInterval: '0', listen: false });
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    const received: Record<string, Msg[]> = {};
    recordRunWatch(received);
    const order: string[] = []; // outputs 1 and 2 in the order they arrive
    const arrived: Msg[] = [];
    helper.getNode('states').on('input', (m: Msg) => (order.push(`state ${String(m.state)}`), arrived.push(m)));
    helper.getNode('finished').on('input', (m: Msg) => (order.push(`finished ${String(m.result)}`), arrived.push(m)));
    await until(() => received.states.length === 1, 'the first state', BUSY_MS);
    const watch = helper.getNode('watch');
    const polls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;
    const poll = async (): Promise<void> => {
      const before = received.states.length + received.finished.length;
      const served = polls();
      watch.receive({});
      await until(() => polls() > served, 'a poll', BUSY_MS);
      await until(() => received.states.length + received.finished.length > before, 'what the poll reports', BUSY_MS);
    };
    const recordReads = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/run-data').length;

    // the first run, seen running (and the records listed at that first sight)
    sim.runs.create({ protocolId: quick, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading', BUSY_MS);
    sim.runs.loadComplete({ protocolId: quick });
    await until(() => sim.runs.state === 'Running', 'Running', BUSY_MS);
    await poll();
    await until(() => recordReads() === 1, 'the records listed at first sight', BUSY_MS);
    assert.deepEqual(
      received.states.map((m) => m.state),
      ['Idle', 'Running'],
    );

    // it completes, unseen; the next run of the same protocol is created and waits at Loading
    await until(() => sim.runs.state === 'Idle', 'the first run completed', BUSY_MS);
    const first = sim.runs.records.all[0];
    sim.runs.create({ protocolId: quick, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'the next run at Loading', BUSY_MS);
    const statusReads = polls();
    await poll();
    // the next run's first sight: its records listed, then the status read once more (fix86: whether it still went on
    // when the list was read). An abort before that read makes the list unsure, and a run never seen with a start time
    // then gets no record (unknown, never another's): the case below is an abort after it (the CI-like run of 8c59c6c,
    // a busy machine, aborted in between)
    await until(
      () => polls() >= statusReads + 2,
      "the next run's records listed at first sight and its status read again",
      BUSY_MS,
    );
    await until(() => received.finished.length > 0, 'the first run reported finished', 3000).catch(() => undefined);
    assert.equal(received.finished.length, 1, `the run that ended is reported while the next one waits; ${order.join(', ')}`);
    assert.equal(received.finished[0].result, 'completed');
    assert.equal(received.finished[0].runId, first.id);
    assert.equal(received.finished[0].protocolId, quick);
    assert.deepEqual((received.finished[0].payload as Msg).states, ['Running']);
    assert.deepEqual(order.slice(-2), ['finished completed', 'state Loading'], 'its end comes before the next state');
    // lh-error-policy's run scope, reading both outputs in that order, is in the next run (not back to the hour)
    const scope = new RunScope();
    arrived.forEach((m, i) => {
      const s = runSighting(m);
      if (s) scope.sighting(s, T + i);
    });
    assert.deepEqual(
      { kind: scope.current(T + 10).kind, key: scope.current(T + 10).key },
      { kind: 'run', key: `${quick}|` },
      'the policy is in the run waiting at Loading',
    );

    // the next run is aborted at the instrument while at Loading (its Aborting falls between two polls): reported on its
    // own, with its own record, never with the first run's record or result
    sim.runs.abort();
    await until(() => sim.runs.state === 'Idle', 'the next run aborted', BUSY_MS);
    const second = sim.runs.records.all.find((r) => r.id !== first.id);
    assert.ok(second, 'the abort left a record');
    await poll();
    await until(() => received.finished.length > 1, 'the next run reported finished', 3000).catch(() => undefined);
    assert.equal(received.finished.length, 2, order.join(', '));
    assert.equal(received.finished[1].result, 'aborted');
    assert.equal(received.finished[1].runId, second.id, 'never the first run record for the second run');
    assert.equal(received.finished[1].protocolId, quick);
    assert.deepEqual((received.finished[1].payload as Msg).states, ['Loading']);
  });
});
