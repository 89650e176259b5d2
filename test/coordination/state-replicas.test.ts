/**
 * lh-state with several Node-REDs (issue 35): only the lease holder sends the state document, and a new holder sends
 * the current one once its watch has polled — never a document that says "0 pending" while an error waits.
 */
import assert from 'assert';

import { Simulator } from '../../src/simulator';
import { Collector, credentialsFor, type FlowNode, leaseHolder, Replica, watchFlows } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { startSimulator } from '../support/runtime';
import { until } from '../support/until';

describeWithRedis('lh-state with two Node-RED processes on one Redis (issue 35)', function () {
  this.timeout(120000);
  const db = useRedis();
  let collector: Collector;
  let sim: Simulator | undefined;
  const replicas: Replica[] = [];

  beforeEach(async function () {
    collector = new Collector();
    await collector.start();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const r of replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of replicas.splice(0)) await r.destroy();
    await sim?.stop();
    await collector.stop();
  });

  /** An error watch (A, every 0.5 s) and lh-state (20 a second) on one instrument; each document posted as `id`. */
  const stateFlows = (prefix: string, baseUrl: string, id: string): FlowNode[] => [
    ...watchFlows({
      redisUrl: db.harness.url,
      prefix,
      leaseSeconds: 2,
      instruments: [{ id: 'i1', baseUrl }],
      collectorUrl: collector.url,
      interval: 0.5,
    }),
    {
      id: 'state',
      type: 'lh-state',
      z: 'tab',
      server: 'server-i1',
      rate: '20',
      machineInterval: '0',
      repeat: '0',
      wires: [['to-state'], []],
    },
    {
      id: 'to-state',
      type: 'function',
      z: 'tab',
      func: `msg.payload = { kind: 'state', id: ${id}, replica: env.get('LH_REPLICA') }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
      outputs: 1,
      wires: [['post']],
    },
  ];

  it('a poll that sees one error resolved and another raised never sends the step between them ("0 pending")', async function () {
    sim = await startSimulator();
    const prefix = `lh-state-swap-${process.pid}`;
    const instruments = [{ id: 'i1', baseUrl: sim.baseUrl }];
    const flows = stateFlows(prefix, sim.baseUrl, "msg.payload.errors.list.map((e) => e.title).sort().join('+') || 'none'");
    const replica = new Replica('r1', flows, credentialsFor(instruments));
    replicas.push(replica);
    await replica.start();
    await until(
      async () => (await leaseHolder(db.redis, prefix, { baseUrl: sim!.baseUrl }, replicas)) !== undefined,
      'a holder',
      20000,
    );
    const states = (): string[] => collector.events.filter((e) => e.kind === 'state').map((e) => e.id);
    // each round: the error pending is resolved and a new one raised between two polls; every document lists one of them
    let current = sim.injectPendingError({ title: 'e0', severity: 'Error' });
    await until(() => states().includes('e0'), 'a document with e0', 20000);
    for (let round = 1; round <= 4; round++) {
      await new Promise((r) => setTimeout(r, 120)); // past the node's rate: the next document may go out at once
      sim.resolvePendingError(current.id);
      current = sim.injectPendingError({ title: `e${round}`, severity: 'Error' });
      await until(() => states().includes(`e${round}`), `a document with e${round}`, 20000);
    }
    const first = states().indexOf('e0');
    assert.deepStrictEqual(
      states()
        .slice(first)
        .filter((s) => !/^e\d$/.test(s)),
      [],
      `documents: ${states().join(', ')}`,
    );
  });

  it('only the holder sends documents; after a SIGKILL the new holder sends the current one (the pending error), none saying 0', async function () {
    sim = await startSimulator();
    const prefix = `lh-state-${process.pid}`;
    const instruments = [{ id: 'i1', baseUrl: sim.baseUrl }];
    const flows = stateFlows(prefix, sim.baseUrl, 'String(msg.payload.errors.pending)');
    for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentialsFor(instruments)));
    await Promise.all(replicas.map((r) => r.start()));
    const holderNow = (): Promise<Replica | undefined> => leaseHolder(db.redis, prefix, { baseUrl: sim!.baseUrl }, replicas);
    await until(async () => (await holderNow()) !== undefined, 'a holder', 20000);

    sim.injectPendingError({ title: 'Clot detected', severity: 'Error' });
    const states = (): { id: string; replica: string }[] => collector.events.filter((e) => e.kind === 'state');
    await until(() => states().some((s) => s.id === '1'), 'a document with the pending error', 20000);
    const holder = await holderNow();
    assert.ok(holder);
    assert.deepStrictEqual(
      [...new Set(states().map((s) => s.replica))],
      [holder.name],
      'documents came from the lease holder only',
    );

    const before = states().length;
    await holder.kill();
    const other = replicas.find((r) => r !== holder)!;
    await until(
      () =>
        states()
          .slice(before)
          .some((s) => s.replica === other.name),
      'a document from the new holder',
      30000,
    );
    const fromNew = states()
      .slice(before)
      .filter((s) => s.replica === other.name);
    assert.strictEqual(fromNew[0].id, '1', 'the new holder first says the error that waits, not "0 pending"');
    assert.ok(
      fromNew.every((s) => s.id === '1'),
      `the new holder's documents: ${fromNew.map((s) => s.id).join(', ')}`,
    );
  });
});
