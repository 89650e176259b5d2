/**
 * Run watch across several real Node-RED processes (issue 19): only the lease holder watches, and what it reported
 * (the last run state, the run, the runs reported finished) is shared in Redis, so a holder SIGKILLed mid-run hands
 * over without a state change reported twice or missed, and the finished run is reported once.
 */
import assert from 'assert';

import { Collected, Replica, useReplicaPair } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

const LEASE_S = 2;

/** The reported state changes in order, as [previous, state]. */
function changes(events: Collected[]): [string, string][] {
  return events.filter((e) => e.kind === 'state').map((e) => e.id.split('>') as [string, string]);
}

/** Every change continues from the one before (none reported twice, none missed), the first from nothing. */
function assertChain(events: Collected[]): void {
  const list = changes(events);
  const text = JSON.stringify(events.filter((e) => e.kind === 'state').map((e) => [e.id, e.replica, e.lost ?? '']));
  assert.ok(list.length > 0, 'some state reported');
  assert.equal(list[0][0], 'null', `the first change starts from nothing: ${text}`);
  for (let i = 1; i < list.length; i++) {
    assert.equal(list[i][0], list[i - 1][1], `change ${i} continues from the one before: ${text}`);
    assert.notEqual(list[i][0], list[i][1], `change ${i} is a change: ${text}`);
  }
}

describeWithRedis('coordination: run watch on several Node-RED processes (issue 19)', function () {
  this.timeout(180000);
  const db = useRedis();
  const prefix = `lh-runs-${process.pid}`;
  const pair = useReplicaPair(db, prefix, LEASE_S);

  const holder = (): Promise<Replica | undefined> => pair.holder();
  const last = (): string | undefined => changes(pair.collector.events).at(-1)?.[1];
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1200)); // a few polls of the holder

  it('the holder SIGKILLed mid-run, twice: every state change reported once, none missed, the finished run once', async function () {
    const { sim, collector } = pair;
    const protocol = sim.addProtocol('Long');
    const steps = sim.state.protocols.get(protocol)!.steps;
    steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 600 });
    await pair.start({ interval: 0.3, runWatch: true });
    await until(async () => (await holder()) !== undefined, 'a holder', 10000);
    await until(() => last() === 'Idle', 'Idle reported', 10000);

    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    await until(() => last() === 'Loading', 'Loading reported', 15000);
    sim.runs.loadComplete({ protocolId: protocol });
    await until(() => last() === 'Running', 'Running reported', 15000);
    await settle();

    // 1: killed while the run goes on unchanged: the next holder must not report Running again
    const first = await holder();
    assert.ok(first);
    await first.kill();
    await until(async () => ((await holder()) ?? first) !== first, 'the other replica took over', 4 * LEASE_S * 1000);
    await settle();
    assert.equal(last(), 'Running');
    sim.runs.pause();
    await until(() => last() === 'Paused', 'Paused reported by the new holder', 15000);
    await first.start();
    await settle();

    // 2: killed, and the run changes while nobody watches: the next holder reports it (from Paused, not from nothing).
    // The restarted replica may be handed the lease now (a replica under its share gets the leases beyond another's):
    // wait until somebody holds it, then kill that one
    await until(async () => (await holder()) !== undefined, 'a holder after the restart', 4 * LEASE_S * 1000);
    const second = await holder();
    assert.ok(second);
    await second.kill();
    sim.runs.resume();
    await until(() => sim.runs.state === 'Running', 'running again', 10000);
    await until(() => last() === 'Running', 'Running reported after the failover', 4 * LEASE_S * 1000 + 5000);
    sim.runs.abort();
    await until(() => collector.events.some((e) => e.kind === 'finished'), 'the finished run', 20000);
    await until(() => last() === 'Idle', 'Idle again', 15000);
    await second.start();
    await settle();
    await settle();

    assertChain(collector.events);
    assert.equal(collector.events.filter((e) => e.kind === 'finished').length, 1, 'the run reported finished once');
    assert.equal(collector.events.filter((e) => e.lost).length, 0, 'nothing sent without coordination');
    const seen = changes(collector.events).map((c) => c[1]);
    console.log(
      `      reported: ${seen.join(' → ')} (by ${collector.events
        .filter((e) => e.kind === 'state')
        .map((e) => e.replica)
        .join(',')})`,
    );
  });

  it('connection msgs once, from the holder: a standby that hears the outage too shows standby and sends nothing', async function () {
    const { sim, collector, replicas } = pair;
    // each replica checks its session often (the standby holds one: its run watch listens for pushes), so the
    // standby's own lh-server sees the instrument go offline and come back, as a standby does in a lab within minutes
    const settings = { liquidHandler: { sessionCheckSeconds: 0.2 } };
    await pair.start({ interval: 0.3, runWatch: true, runWatchConnection: true }, settings);
    await until(async () => (await holder()) !== undefined, 'a holder', 10000);
    await until(() => last() === 'Idle', 'Idle reported', 10000);
    const statuses = (r: Replica): string[] =>
      collector.events.filter((e) => e.kind === 'status' && e.replica === r.name).map((e) => e.id);
    // the leases settle once both replicas are live (the first one up may hand the instrument to the other)
    await until(() => replicas.some((r) => statuses(r).at(-1)?.startsWith('standby') === true), 'a standby', 10000);
    await settle();
    // a lease renewed late on a very busy machine may lapse for a moment (run 43 of the CI-like series): wait for it
    await until(async () => (await holder()) !== undefined, 'a holder after the leases settled', 10000);
    const watching = await holder();
    assert.ok(watching);
    const standby = replicas.find((r) => r !== watching)!;
    await until(() => statuses(standby).at(-1)?.startsWith('standby') === true, 'the standby says so', 10000);
    const before = statuses(standby).length;

    sim.setFaults({ statusRate: 1, statusCode: 503 });
    await until(() => collector.count('connection', 'offline') >= 1, 'offline reported', 15000);
    await new Promise((r) => setTimeout(r, 4000)); // the standby's session checks: more than 3 failed in a row
    sim.clearFaults();
    await until(() => collector.count('connection', 'online') >= 1, 'online reported', 15000);
    await new Promise((r) => setTimeout(r, 2000)); // the standby's next session checks answered

    const connection = collector.events.filter((e) => e.kind === 'connection').map((e) => `${e.id}@${e.replica}`);
    assert.equal((await holder())?.name, watching.name, 'the holder did not change (else the test proves nothing)');
    assert.deepEqual(connection, [`offline@${watching.name}`, `online@${watching.name}`], 'each change once, from the holder');
    const shown = statuses(standby).slice(before);
    assert.ok(
      shown.every((text) => text.startsWith('standby')),
      `the standby showed only its standby line: ${JSON.stringify(shown)}`,
    );
  });
});
