import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { RUN_WATCH_OUTPUTS, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper, nextMessage } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

/** How long a wait for the watch's msgs may take on a busy machine (run 45 of the CI-like series took over 5 s). */
const BUSY_MS = 20000;

describe('lh-run-watch', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 20 } });
  let stopFollowing: (() => void) | undefined;
  afterEach(function () {
    stopFollowing?.();
    restartMemory(); // as a restart of Node-RED: each test starts from nothing reported
  });

  const runPolls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;
  const flow = (config: Msg = {}) => runWatchFlow(sim, { interval: '0.5', progressInterval: '0', ...config });

  /** Every msg reaching a helper node, across redeploys (the helper node objects are replaced on a full deploy). */
  const received: Record<string, Msg[]> = {};
  function record(): void {
    for (const id of RUN_WATCH_OUTPUTS) {
      received[id] ??= [];
      helper.getNode(id).on('input', (msg: Msg) => received[id].push(msg));
    }
  }

  /** Polls the watch node at once whenever the simulated run changes state, so every state is seen. */
  function followTransitions(): void {
    let seen = sim.runs.transitions.length;
    const timer = setInterval(() => {
      if (sim.runs.transitions.length === seen) return;
      seen = sim.runs.transitions.length;
      helper.getNode('watch')?.receive({});
    }, 2);
    stopFollowing = () => clearInterval(timer);
  }

  beforeEach(function () {
    for (const key of Object.keys(received)) delete received[key];
  });

  it('emits each state change once, and the finished run once, across a full redeploy in the middle of a run', async function () {
    this.timeout(120000);
    const quick = sim.addProtocol('Quick');
    // the passing states (Scheduling 2 s, Scheduled 1 s, Pausing 2 s) at speed 1: a poll sees each even when a busy
    // machine takes a while to answer it (at speed 20 Scheduled lasted 50 ms, and a slow poll saw Loading instead)
    sim.runs.setSpeed(1);
    // two steps of 4 simulated seconds: 200 ms each at speed 20, once the run is paused
    const steps = sim.state.protocols.get(quick)!.steps;
    steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 4 });
    steps.push({
      stepType: 'AddReagentStep',
      id: 901,
      name: 'Add',
      stepOrder: 2,
      disabled: false,
      duration: 4,
      destinations: [{ labware: 'P', wells: 'A1' }],
    });
    const f = flow();
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    record();
    await until(() => received.states.length === 1, 'the first state', BUSY_MS);
    assert.deepEqual([received.states[0].state, received.states[0].previousState], ['Idle', null]);
    followTransitions();

    sim.runs.create({ protocolId: quick, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading', BUSY_MS);
    await until(() => received.states.length === 4, 'Scheduling, Scheduled, Loading', BUSY_MS);
    sim.runs.loadComplete({ protocolId: quick });
    await until(() => received.states.length === 5, 'Running', BUSY_MS);
    sim.runs.pause();
    await until(() => sim.runs.state === 'Paused', 'Paused', BUSY_MS);
    await until(() => received.states.length === 7, 'Running, Pausing, Paused', BUSY_MS);
    sim.runs.setSpeed(20);

    // a full redeploy while the run is paused: the new node instance must not report Paused (or anything) again
    await helper.setFlows(f.nodes, 'full', f.credentials);
    record();
    const watch = helper.getNode('watch');
    // two polls served (on input or at the interval), not a fixed sleep: a busy machine takes longer, the check waits
    let served = runPolls();
    watch.receive({});
    await until(() => runPolls() > served, 'a poll after the redeploy', BUSY_MS);
    served = runPolls();
    watch.receive({});
    await until(() => runPolls() > served, 'another poll', BUSY_MS);
    assert.equal(received.states.length, 7);

    sim.runs.resume();
    await until(() => received.finished.length === 1, 'the finished run', BUSY_MS);
    await until(() => received.states[received.states.length - 1]?.state === 'Idle', 'Idle', BUSY_MS);
    assert.deepEqual(
      received.states.map((m) => m.state),
      ['Idle', 'Scheduling', 'Scheduled', 'Loading', 'Running', 'Pausing', 'Paused', 'Running', 'Idle'],
    );
    assert.deepEqual(
      received.states.slice(1).map((m) => m.previousState),
      ['Idle', 'Scheduling', 'Scheduled', 'Loading', 'Running', 'Pausing', 'Paused', 'Running'],
    );
    const [done] = received.finished;
    assert.equal(done.result, 'completed');
    assert.equal(done.protocolName, 'Quick');
    assert.equal(done.protocolId, quick);
    assert.equal(done.runId, sim.runs.records.all[0].id);
    assert.ok(typeof done.duration === 'number' && done.duration >= 400, `duration ${String(done.duration)}`);
    // progress: 0..1 with an ETA while running
    const progress = received.progress.map((m) => m.progress as number);
    assert.ok(progress.length > 0);
    assert.ok(progress.every((p) => p >= 0 && p <= 1));
    assert.equal(typeof received.progress[0].eta, 'string');
    const polled = runPolls();
    await until(() => runPolls() >= polled + 2, 'more regular polls', BUSY_MS); // still exactly once after them
    assert.equal(received.finished.length, 1);
    assert.equal(received.states.length, 9);
  });

  it('reports an aborted run as aborted and a run failed by an error answered Abort as failed', async function () {
    sim.runs.setSpeed(50);
    const f = flow();
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    record();
    followTransitions();
    sim.runs.create({ protocolId: 1 }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading');
    sim.runs.loadComplete({ protocolId: 1 });
    await until(() => received.states[received.states.length - 1]?.state === 'Running', 'Running');
    sim.runs.abort();
    await until(() => received.finished.length === 1, 'the aborted run');
    assert.equal(received.finished[0].result, 'aborted');

    sim.runs.create({ protocolId: 1 }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading');
    sim.runs.loadComplete({ protocolId: 1 });
    await until(() => received.states[received.states.length - 1]?.state === 'Running', 'Running');
    const { error } = sim.injectRunError({ responses: ['Abort', 'Retry'] });
    await until(() => received.states[received.states.length - 1]?.state === 'ErrorHandling', 'ErrorHandling');
    sim.resolvePendingError(error!.id); // answered on the instrument with its first response: Abort
    await until(() => received.finished.length === 2, 'the second run');
    assert.equal(received.finished[1].result, 'failed');
    assert.deepEqual(((received.finished[1].payload as Msg).states as string[]).slice(-3), [
      'Running',
      'ErrorHandling',
      'Aborting',
    ]);
  });

  it('reports offline after failed polls and online once when the instrument answers again', async function () {
    const f = flow({ offlineAfter: '1' });
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    record();
    await until(() => received.states.length === 1, 'first poll');
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    const offline = nextMessage(helper.getNode('connection'));
    helper.getNode('watch').receive({});
    assert.equal((await offline).event, 'offline');
    sim.clearFaults();
    const online = nextMessage(helper.getNode('connection'));
    helper.getNode('watch').receive({});
    assert.equal((await online).event, 'online');
    assert.equal(received.states.length, 1);
  });
});
