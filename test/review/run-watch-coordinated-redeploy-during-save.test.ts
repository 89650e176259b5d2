/**
 * Review (review25, coordination). lh-run-watch with lh-coordination writes its memory (the state reported, the runs
 * reported finished) to Redis under the lease before it sends the msg. A redeploy of the node while that write was on
 * its way to Redis lost the msg: the closed node saw `loop.stopped` after the write and sent nothing, and the
 * redeployed node read the memory from Redis, where the change was already recorded as reported: the state change
 * (and a finished run the same way) was never sent by anyone. README: "a new holder reports a change made while
 * nobody watched"; "Output 2: once per finished run ... Nothing is reported twice across redeploys" — once, not never.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { builtNode, useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { RUN_WATCH_OUTPUTS, runWatchModules } from '../support/run-watch-suite';
import { helper, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: coordinated lh-run-watch redeployed while its memory is written', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { simulationSpeed: 20 }, afterEach: () => restartMemory() });
  const db = useRedis();
  afterEach(() => db.harness.resume());

  const received: Record<string, Msg[]> = {};
  function record(): void {
    for (const id of RUN_WATCH_OUTPUTS) {
      received[id] ??= [];
      helper.getNode(id).on('input', (msg: Msg) => received[id].push(msg));
    }
  }
  const statusPolls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;

  function flow(prefix: string, name: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    return {
      nodes: [
        { id: 'tab', type: 'tab', label: 'runs' },
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 5 },
        ...server.nodes,
        {
          id: 'watch',
          type: 'lh-run-watch',
          z: 'tab',
          name,
          server: 'server',
          interval: '0.5',
          progressInterval: '0',
          listen: false,
          wires: RUN_WATCH_OUTPUTS.map((id) => [id]),
        },
        ...RUN_WATCH_OUTPUTS.map((id) => ({ id, type: 'helper', z: 'tab' })),
      ],
      credentials: server.credentials,
    };
  }

  it('the state change decided before the redeploy is reported once', async function () {
    if (db.harness.external) this.skip(); // an external Redis (LH_REDIS_URL) cannot be paused from here
    for (const id of RUN_WATCH_OUTPUTS) received[id] = [];
    const prefix = `lh-run-watch-redeploy-save-${process.pid}`;
    const protocol = sim.addProtocol('Quick');
    sim.state.protocols
      .get(protocol)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 40 });
    const first = flow(prefix, 'before');
    await helper.load([...runWatchModules(), builtNode('lh-coordination')], first.nodes, first.credentials);
    record();
    await until(() => received.states.length === 1, 'the holder reports the first state', 20000);
    assert.equal(received.states[0].state, 'Idle');

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
    const states = received.states.map((m) => `${String(m.previousState)}>${String(m.state)}`);
    const said = `states reported: ${states.join(', ')}`;
    received.states.forEach((m, i) => assert.equal(m.previousState, i === 0 ? null : received.states[i - 1].state, said));
    assert.equal(received.states[received.states.length - 1].state, 'Loading', said);
  });
});
