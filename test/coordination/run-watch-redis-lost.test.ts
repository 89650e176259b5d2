/**
 * Run watch with Redis unreachable (issue 19), through real Node-RED processes: every replica watches on its own and
 * says so (status "coordination lost", msgs marked `coordination: "lost"`: a duplicate beats a miss); once Redis is
 * back, one replica watches again, the other shows standby, and what happens next is reported once, unmarked.
 */
import assert from 'assert';

import { Collected, Replica, useReplicaPair } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

const LEASE_S = 2;

describeWithRedis('coordination: run watch while Redis is unreachable (issue 19)', function () {
  this.timeout(120000);
  const db = useRedis();
  const prefix = `lh-runs-lost-${process.pid}`;
  afterEach(() => db.harness.resume()); // before the pair's clean-up: replicas stop with Redis back
  const pair = useReplicaPair(db, prefix, LEASE_S);

  it('each replica watches and says coordination is lost; back, one watches, the other stands by, each change once', async function () {
    const { sim, collector, replicas } = pair;
    if (db.harness.external) this.skip(); // an external Redis (LH_REDIS_URL) cannot be paused from here
    await pair.start({ interval: 0.3, runWatch: true, runWatchConnection: true });
    const holder = (): Promise<Replica | undefined> => pair.holder();
    const states = (): Collected[] => collector.events.filter((e) => e.kind === 'state');
    const statusOf = (r: Replica): string | undefined =>
      collector.events.filter((e) => e.kind === 'status' && e.replica === r.name).at(-1)?.id;
    await until(() => states().at(-1)?.id.endsWith('>Idle') === true, 'Idle reported', 10000);
    const protocol = sim.addProtocol('Long');
    sim.state.protocols
      .get(protocol)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 600 });
    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    await until(
      () => states().at(-1)?.id.endsWith('>Loading') === true,
      `Loading reported: ${JSON.stringify(states().map((e) => e.id))}`,
      15000,
    );

    db.harness.pause(); // frozen: connections stay open, nothing answers
    await until(
      () => replicas.every((r) => statusOf(r)?.startsWith('coordination lost') === true),
      'both replicas say coordination is lost',
      4 * LEASE_S * 1000 + 5000,
    );
    const outage = collector.events.length;
    const outageStates = states().length;
    sim.runs.loadComplete({ protocolId: protocol });
    await until(() => states().filter((e) => e.id === 'Loading>Running').length === 2, 'Running reported by both, marked', 10000);
    assert.ok(
      states()
        .slice(outageStates)
        .every((e) => e.lost === 'lost'),
      'sent without the shared memory: marked',
    );
    // a status line of a poll while lost does not replace the lost line
    await new Promise((r) => setTimeout(r, 1000));
    for (const r of replicas) assert.match(String(statusOf(r)), /^coordination lost/, `${r.name} still says it`);
    // the instrument goes away meanwhile: each replica says so, marked (it may come twice)
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    await until(() => collector.count('connection', 'offline') === 2, 'offline reported by both', 15000);
    sim.clearFaults();
    await until(() => collector.count('connection', 'online') === 2, 'online reported by both', 15000);
    const connection = collector.events.filter((e) => e.kind === 'connection');
    assert.ok(
      connection.every((e) => e.lost === 'lost'),
      `connection msgs sent without coordination are marked: ${JSON.stringify(connection)}`,
    );
    db.harness.resume();

    await until(async () => (await holder()) !== undefined, 'a holder again', 15000);
    await new Promise((r) => setTimeout(r, 2 * LEASE_S * 1000)); // the leases settle, every replica's round reached Redis
    const watching = await holder();
    const standby = replicas.find((r) => r !== watching)!;
    assert.match(String(statusOf(standby)), /^standby/, 'the other replica stands by');
    const back = states().length; // state changes reported so far
    sim.runs.abort();
    await until(
      () => states().slice(back).length > 0,
      `a change reported: ${JSON.stringify(collector.events.slice(outage).map((e) => [e.kind, e.id, e.replica, e.lost ?? '']))}`,
      10000,
    );
    await new Promise((r) => setTimeout(r, 1500)); // a few more polls of both
    const after = states().slice(back);
    const text = JSON.stringify(after.map((e) => [e.id, e.replica, e.lost ?? '']));
    assert.ok(after[0].id.startsWith('Running>'), `continues from the state reported during the outage: ${text}`);
    assert.ok(
      after.every((e) => e.replica === watching!.name && !e.lost),
      `after the outage: from the holder, unmarked: ${text}`,
    );
    assert.equal(new Set(after.map((e) => e.id)).size, after.length, `each change once: ${text}`);
  });
});
