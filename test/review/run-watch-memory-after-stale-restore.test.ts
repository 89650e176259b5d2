/**
 * Review (review30, coordination). lh-run-watch keeps what it reported (the last state, the run watched, the runs
 * reported finished) in Redis under the holder's lease. Redis restored from a snapshot taken while a run was going on
 * brought back the holder's lease (the same token: its writes pass) and the memory of that moment, though the holder
 * had reported the run finished since. The holder went on from its local memory and never wrote it again while
 * nothing changed, so Redis kept the older one: a redeploy of the run watch node (its next instance reads Redis),
 * before the holder's next round or any time after, or the next holder, reported the state change and the finished run
 * again, unmarked. README: "a holder killed mid-run hands over without a state change reported twice", "Nothing is
 * reported twice across redeploys"; "A holder whose lease came back with the snapshot recovers the same way under that
 * lease".
 *
 * Now a redeployed node whose replica still holds the lease under the same token goes on from its local memory (only
 * that replica wrote under the token), and a holder that learns Redis lost data under its lease writes its memory back.
 * Real redis-server, restarted on a copy of an older dump.rdb, and a real Node-RED runtime.
 */
import assert from 'node:assert/strict';

import { CoordinationKeys } from '../../src/coordination/keys';
import { restartMemory } from '../support/homes';
import { builtNode, useInstrument } from '../support/node-suite';
import { describeWithRedis, useOlderDumps } from '../support/redis-server';
import { recordRunWatch, RUN_WATCH_OUTPUTS, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: lh-run-watch after Redis came back from an older snapshot', function () {
  this.timeout(90000);
  const sim = useInstrument({ simulator: { simulationSpeed: 20 }, afterEach: () => restartMemory() });
  const dumps = useOlderDumps();
  let run = 0;

  const received: Record<string, Msg[]> = {};
  const record = (): void => recordRunWatch(received);
  const statusPolls = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/protocol-run').length;
  async function polls(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const served = statusPolls();
      await until(() => statusPolls() > served, 'a poll of the run watch', 10000);
    }
  }

  function flow(prefix: string, name: string, leaseSeconds: number): ReturnType<typeof runWatchFlow> {
    const coordination = { id: 'coord', type: 'lh-coordination', url: dumps.harness.url, prefix, leaseSeconds };
    return runWatchFlow(sim, { name, interval: '0.3', progressInterval: '0', listen: false }, coordination);
  }

  /** Redis killed (nothing saved) and restarted on the older dump: a new run id, the writes since the dump gone. */
  async function restartFrom(copy: string): Promise<void> {
    await dumps.restartFrom(copy);
    // the Node-RED's connection back (it reconnects within 2 s): its reads and writes reach the restored data
    await dumps.reconnected();
  }

  /**
   * The holder reports Idle, then a run (snapshot taken while it runs), then the run finished and Idle; Redis comes
   * back from the snapshot with the holder's lease. Returns the coordination prefix.
   */
  async function runThenRestore(leaseSeconds: number): Promise<string> {
    for (const id of RUN_WATCH_OUTPUTS) received[id] = [];
    const prefix = `lh-run-watch-stale-${process.pid}-${++run}`;
    const protocol = sim.addProtocol('Quick');
    sim.state.protocols
      .get(protocol)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 20 });
    const first = flow(prefix, 'run watch', leaseSeconds);
    await helper.load([...runWatchModules(), builtNode('lh-coordination')], first.nodes, first.credentials);
    record();
    await until(() => received.states.length === 1, 'the holder reports the first state', 45000);
    assert.equal(received.states[0].state, 'Idle');
    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    await until(() => received.states.some((m) => m.state === 'Loading'), 'Loading reported', 10000);
    await polls(2); // its memory written
    const copy = await dumps.snapshot();
    sim.runs.loadComplete({ protocolId: protocol });
    await until(() => received.finished.length === 1, 'the finished run reported', 20000);
    await until(() => received.states.at(-1)?.state === 'Idle', 'Idle reported', 10000);
    await polls(2);
    await restartFrom(copy);
    return prefix;
  }

  function expectOnce(): void {
    const states = received.states.map((m) => `${String(m.previousState)}>${String(m.state)}`);
    const said = `states reported: ${states.join(', ')}; finished: ${received.finished.length}`;
    received.states.forEach((m, i) => assert.equal(m.previousState, i === 0 ? null : received.states[i - 1].state, said));
    assert.equal(received.finished.length, 1, `the finished run reported once: ${said}`);
    assert.equal(received.states.at(-1)?.state, 'Idle', said);
  }

  it('a redeploy of the run watch right after the restore (before the next round) reports nothing again', async function () {
    const prefix = await runThenRestore(60); // rounds every 20 s: none comes before the checks
    const edited = flow(prefix, 'run watch (edited)', 60);
    await helper.setFlows(edited.nodes, 'nodes', edited.credentials);
    await polls(5);
    expectOnce();
  });

  it('the holder writes its memory back once a round tells the loss: the memory in Redis says the run finished', async function () {
    const prefix = await runThenRestore(9); // rounds every 3 s, the restored lease still valid
    const instrumentKey = String((helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey);
    const key = new CoordinationKeys(prefix).instrument(instrumentKey).shared('memory:run:watch');
    // what the next holder (or this node's next instance on another replica) would continue from
    const stored = async (): Promise<{ state?: string; finished: string[] } | undefined> => {
      const raw = await dumps.redis.get(key);
      return raw === null ? undefined : (JSON.parse(raw.slice(raw.indexOf('\n') + 1)) as { state?: string; finished: string[] });
    };
    assert.equal((await stored())?.state, 'Loading', 'the restore brought back the memory of the snapshot');
    await until(
      async () => {
        const memory = await stored();
        return memory?.state === 'Idle' && memory.finished.length === 1;
      },
      `the holder's memory written back: ${JSON.stringify(await stored())}`,
      15000,
    );
    expectOnce();
  });
});
