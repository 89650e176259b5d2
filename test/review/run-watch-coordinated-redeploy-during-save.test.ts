/**
 * Review (review25, coordination). lh-run-watch with lh-coordination writes its memory (the state reported, the runs
 * reported finished) to Redis under the lease before it sends the msg. A redeploy of the node while that write was on
 * its way to Redis lost the msg: the closed node saw `loop.stopped` after the write and sent nothing, and the
 * redeployed node read the memory from Redis, where the change was already recorded as reported: the state change
 * (and a finished run the same way) was never sent by anyone. README: "a new holder reports a change made while
 * nobody watched"; "Output 2: once per finished run ... Nothing is reported twice across redeploys" — once, not never.
 *
 * Review (review28, coordination). lh-run-watch with lh-coordination: a redeploy of the node while its memory write
 * is on its way to Redis leaves what that poll recorded as reported to the node's next instance (`memory.unsent`,
 * review25), which sent it at the start of a poll. The next instance's first poll had begun meanwhile (its status read
 * done, its memory read waiting behind the old write), so it found nothing unsent; when Redis answered, it continued
 * from the state the old poll recorded and sent the change after it first, and the old poll's change only at its next
 * poll: `Loading>Running` before `Idle>Loading`, and lh-state and the metrics heard the run's older state last. README:
 * "Nothing is reported twice, or missed, across redeploys (what a node closed mid-poll had recorded, its next
 * instance sends)": in order, each msg continuing from the one before. What an earlier instance left unsent now goes
 * out before each poll's own msgs, also when it arrived during that poll.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { builtNode, useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { recordRunWatch, RUN_WATCH_OUTPUTS, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: coordinated lh-run-watch redeployed while its memory is written', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { simulationSpeed: 20 }, afterEach: () => restartMemory() });
  const db = useRedis();
  afterEach(() => db.harness.resume());

  const received: Record<string, Msg[]> = {};
  const record = (): void => recordRunWatch(received);
  const statusPolls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;

  function flow(prefix: string, name: string): ReturnType<typeof runWatchFlow> {
    const coordination = { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 5 };
    return runWatchFlow(sim, { name, interval: '0.5', progressInterval: '0', listen: false }, coordination);
  }

  /** The flow deployed and its first state (Idle) reported; a protocol of one pause step of `duration` s to run. */
  async function deployedIdle(prefix: string, duration: number): Promise<number> {
    for (const id of RUN_WATCH_OUTPUTS) received[id] = [];
    const protocol = sim.addProtocol('Quick');
    sim.state.protocols
      .get(protocol)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration });
    const first = flow(prefix, 'before');
    await helper.load([...runWatchModules(), builtNode('lh-coordination')], first.nodes, first.credentials);
    record();
    await until(() => received.states.length === 1, 'the holder reports the first state', 20000);
    assert.equal(received.states[0].state, 'Idle');
    return protocol;
  }

  /** Each state msg continues from the one before (none twice, none missed), the last one `last`. */
  function assertChainTo(last: string): void {
    const states = received.states.map((m) => `${String(m.previousState)}>${String(m.state)}`);
    const said = `states reported: ${states.join(', ')}`;
    received.states.forEach((m, i) => assert.equal(m.previousState, i === 0 ? null : received.states[i - 1].state, said));
    assert.equal(received.states[received.states.length - 1].state, last, said);
  }

  it('the state change decided before the redeploy is reported once', async function () {
    if (db.harness.external) this.skip(); // an external Redis (LH_REDIS_URL) cannot be paused from here
    const prefix = `lh-run-watch-redeploy-save-${process.pid}`;
    const protocol = await deployedIdle(prefix, 40);

    // Redis stops answering (shorter than a lease: a slow Redis, not a lost one); the run starts meanwhile
    db.harness.pause();
    const before = statusPolls();
    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    // the holder's next poll sees the run (Scheduling, then Loading: it waits for load-complete) and writes its memory (the write waits for Redis)
    await until(() => statusPolls() > before, 'a poll that sees the run loading', 5000);
    await new Promise((r) => setTimeout(r, 200));
    // the user deploys a change of the run watch node (only that node restarts) while the write is on its way
    const edited = flow(prefix, 'after');
    await helper.setFlows(edited.nodes, 'nodes', edited.credentials);
    db.harness.resume();

    // several polls of the redeployed node
    for (let i = 0; i < 4; i++) {
      const served = statusPolls();
      await until(() => statusPolls() > served, 'a poll of the redeployed node', 10000);
    }
    assert.equal(sim.runs.state, 'Loading');
    await until(() => received.states.some((m) => m.state === 'Loading'), 'Loading reported', 3000).catch(() => undefined);
    // every change reported once, none missed: each msg continues from the one before, up to the instrument's state
    assertChainTo('Loading');
  });

  it('a change seen by the first poll of the next instance goes out after the one the closed instance left', async function () {
    if (db.harness.external) this.skip(); // an external Redis (LH_REDIS_URL) cannot be paused from here
    const prefix = `lh-run-watch-unsent-order-${process.pid}`;
    const protocol = await deployedIdle(prefix, 400);

    // Redis stops answering (a slow Redis); the run starts and the holder's poll sees it loading, its write waits
    db.harness.pause();
    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'the run loading', 5000);
    const seen = statusPolls();
    await until(() => statusPolls() > seen, 'a poll that sees the run loading', 5000);
    await new Promise((r) => setTimeout(r, 200));
    // the run goes on (loaded: Running), then the user deploys a change of the run watch node while the write waits
    sim.runs.loadComplete({ protocolId: protocol });
    assert.equal(sim.runs.state, 'Running');
    const beforeDeploy = statusPolls();
    const edited = flow(prefix, 'after');
    await helper.setFlows(edited.nodes, 'nodes', edited.credentials);
    // the next instance's first poll reads the status (Running); its memory read waits behind the old write
    await until(() => statusPolls() > beforeDeploy, 'the first poll of the redeployed node', 5000);
    await new Promise((r) => setTimeout(r, 100));
    db.harness.resume();

    await until(() => received.states.some((m) => m.state === 'Running'), 'Running reported', 10000);
    for (let i = 0; i < 3; i++) {
      const served = statusPolls();
      await until(() => statusPolls() > served, 'a poll of the redeployed node', 10000);
    }
    // every change reported once, in order: each msg continues from the one before, up to the instrument's state
    assertChainTo('Running');
  });
});
