import assert from 'node:assert/strict';

import type { Simulator } from '../../src/simulator';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { RUN_WATCH_OUTPUTS, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
interface ServerWithClient {
  client: { events: { state(channel: string): string; listenerCount(event: string): number } };
}

const FULL_RUN = ['Idle', 'Scheduling', 'Scheduled', 'Loading', 'Running', 'Idle'];

const watchFlow = (sim: Simulator, config: Msg = {}) => runWatchFlow(sim, { interval: '60', progressInterval: '5', ...config });
async function load(sim: Simulator, config: Msg = {}): Promise<Record<(typeof RUN_WATCH_OUTPUTS)[number], Msg[]>> {
  const f = watchFlow(sim, config);
  await helper.load(runWatchModules(), f.nodes, f.credentials);
  const received = { states: [], finished: [], progress: [], connection: [] } as Record<
    (typeof RUN_WATCH_OUTPUTS)[number],
    Msg[]
  >;
  for (const id of RUN_WATCH_OUTPUTS) helper.getNode(id).on('input', (msg: Msg) => received[id].push(msg));
  return received;
}

/** A protocol of two steps of 4 simulated seconds (0.8 s each at speed 5; Scheduled lasts 0.2 s). */
function twoSteps(sim: Simulator): number {
  const id = sim.addProtocol('Pushed');
  const steps = sim.state.protocols.get(id)!.steps;
  steps.push({ stepType: 'PauseStep', id: 960, name: 'Wait', stepOrder: 1, disabled: false, duration: 4 });
  steps.push({ stepType: 'PauseStep', id: 961, name: 'Wait more', stepOrder: 2, disabled: false, duration: 4 });
  sim.runs.setSpeed(5);
  return id;
}

/**
 * Runs the protocol from create to its end; load-complete once `loaded()` says so (an operator confirms the deck
 * after the watch showed Loading), or as soon as it is Loading.
 */
async function runToEnd(sim: Simulator, id: number, loaded: () => boolean = () => true): Promise<void> {
  sim.runs.create({ protocolId: id, simulate: true }, 'admin');
  await until(() => sim.runs.state === 'Loading' && loaded(), 'Loading');
  sim.runs.loadComplete({ protocolId: id });
  await until(() => sim.runs.records.all.length === 1, 'the run record', 10000);
}

/**
 * Polling alone may miss a state shorter than the interval (Scheduled lasts 0.2 s here): what it reports must be the
 * run's states in order, each once, with Running and the final Idle among them.
 */
function assertPolledRun(states: unknown[]): void {
  let k = 0;
  for (const s of states) {
    while (k < FULL_RUN.length && FULL_RUN[k] !== s) k++;
    assert.ok(k < FULL_RUN.length, `${JSON.stringify(states)} is not the run's states in order, each once`);
    k++;
  }
  assert.ok(states.includes('Running'), 'Running reported');
  assert.equal(states[states.length - 1], 'Idle');
}

const statusPolls = (sim: Simulator): number =>
  sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;

describe('lh-run-watch with pushes (instinctevents)', function () {
  const sim = useInstrument();
  afterEach(function () {
    restartMemory();
  });

  it('reports every state change of a run although its poll interval (1 h) never elapses: pushes trigger the polls', async function () {
    const id = twoSteps(sim);
    // the first regular poll after the deploy's comes 54..60 min later, long after this test's timeout: every report
    // here was triggered by a push (no wall-clock bound, which a busy machine could miss)
    const received = await load(sim, { interval: '3600' });
    await until(() => received.states.length === 1, 'the first poll (Idle)');
    await until(() => sim.eventSocketInfo.counts.events === 1, 'the event socket');
    await runToEnd(sim, id, () => received.states.some((m) => m.state === 'Loading'));
    await until(() => received.finished.length === 1, 'the finished run');
    await until(() => received.states.length >= FULL_RUN.length, 'the final Idle');
    assert.deepEqual(
      received.states.map((m) => m.state),
      FULL_RUN,
    );
    assert.deepEqual(
      received.states.map((m) => m.previousState),
      [null, ...FULL_RUN.slice(0, -1)],
    );
    const [done] = received.finished;
    assert.equal(done.result, 'completed');
    assert.equal(done.runId, sim.runs.records.all[0].id);
    assert.equal(done.protocolName, 'Pushed');
  });

  it('reports each change once when a push and the regular poll both see it', async function () {
    const id = twoSteps(sim);
    const received = await load(sim, { interval: '0.5' });
    await until(() => received.states.length === 1, 'the first poll (Idle)');
    await until(() => sim.eventSocketInfo.counts.events === 1, 'the event socket');
    await runToEnd(sim, id, () => received.states.some((m) => m.state === 'Loading'));
    await until(() => received.finished.length === 1, 'the finished run');
    await until(() => received.states.length >= FULL_RUN.length, 'the final Idle');
    // two more regular polls (each also seeing the last state) and a pushed status: still nothing new
    const polls = statusPolls(sim);
    sim.publishEvent('RunStatus', 'Run state Idle', sim.runs.status());
    await until(() => statusPolls(sim) >= polls + 3, 'three more polls');
    assert.deepEqual(
      received.states.map((m) => m.state),
      FULL_RUN,
    );
    assert.equal(received.finished.length, 1);
  });

  it('with "listen for pushes" off, opens no socket and reports the run by polling', async function () {
    const id = twoSteps(sim);
    const upgrades = sim.eventSocketInfo.upgrades.length;
    const received = await load(sim, { interval: '0.5', listen: false });
    await until(() => received.states.length === 1, 'the first poll (Idle)');
    const server = helper.getNode('server') as unknown as ServerWithClient;
    assert.equal(server.client.events.state('events'), 'idle');
    await runToEnd(sim, id);
    await until(() => received.finished.length === 1, 'the finished run');
    await until(
      () => received.states.length > 1 && received.states[received.states.length - 1].state === 'Idle',
      'the final Idle',
    );
    assertPolledRun(received.states.map((m) => m.state));
    assert.equal(sim.eventSocketInfo.upgrades.length, upgrades, 'no upgrade request');
  });

  it('removes its subscriptions on close: 20 redeploys of the node leave one socket and one state listener of the node', async function () {
    this.timeout(60000);
    const f = watchFlow(sim);
    const eventUpgrades = (): number => sim.eventSocketInfo.upgrades.filter((u) => u.channel === 'events').length;
    const before = eventUpgrades();
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    await until(() => sim.eventSocketInfo.counts.events === 1, 'the event socket');
    const server = helper.getNode('server') as unknown as ServerWithClient;
    for (let i = 1; i <= 20; i++) {
      const nodes = f.nodes.map((n) => (n.id === 'watch' ? { ...n, name: `watch ${i}` } : n));
      await helper.setFlows(nodes, 'nodes', f.credentials);
      assert.equal(helper.getNode('server'), server, 'the lh-server stays: only the watch node is redeployed');
      // each redeploy closes the socket with its only listener and opens a new one: a leaked listener would keep it
      await until(() => eventUpgrades() === before + i + 1, `the socket of redeploy ${i}`);
      await until(() => sim.eventSocketInfo.counts.events === 1, `one socket after redeploy ${i}`);
    }
    // besides the node's own, one listener is the lh-server's connection state (it hears the sockets open)
    assert.equal(server.client.events.listenerCount('state'), 2);
    await (helper.getNode('watch') as unknown as { close(removed: boolean): Promise<void> }).close(true);
    assert.equal(server.client.events.listenerCount('state'), 1);
    assert.equal(server.client.events.state('events'), 'idle');
    await until(() => sim.eventSocketInfo.counts.events === 0, 'no socket once the node is gone');
  });
});

describe('lh-run-watch on an instrument without event sockets', function () {
  const sim = useInstrument({ simulator: { sockets: false } });
  afterEach(function () {
    restartMemory();
  });

  it('falls back to polling: the socket is unavailable and the run is reported by polls, each state once', async function () {
    const id = twoSteps(sim);
    const received = await load(sim, { interval: '0.5' });
    await until(() => received.states.length === 1, 'the first poll (Idle)');
    const server = helper.getNode('server') as unknown as ServerWithClient;
    await until(() => server.client.events.state('events') === 'unavailable', 'the socket found unavailable');
    await runToEnd(sim, id);
    await until(() => received.finished.length === 1, 'the finished run');
    await until(
      () => received.states.length > 1 && received.states[received.states.length - 1].state === 'Idle',
      'the final Idle',
    );
    assertPolledRun(received.states.map((m) => m.state));
    assert.equal(received.finished[0].result, 'completed');
    assert.equal(received.connection.length, 0, 'no offline/online: the instrument answered every poll');
  });
});
