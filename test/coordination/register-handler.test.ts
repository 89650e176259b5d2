/**
 * The B error handler registered by lh-register-handler (registration while deployed) on several Node-REDs sharing one
 * Redis (issue 19): every replica registers it, and only the last live replica to stop unregisters it, so stopping
 * one replica never leaves the others' B errors unhandled. Real Node-RED processes, a real simulator, a real Redis.
 */
import assert from 'assert';

import { Simulator } from '../../src/simulator';
import { Collector, registerHandlerFlows, Replica } from '../support/red-replicas';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

describeWithRedis('coordination: the B error handler on several Node-REDs (issue 19)', function () {
  this.timeout(120000);
  const redisServer = new RedisHarness();
  let collector: Collector;
  let sim: Simulator;
  const replicas: Replica[] = [];

  before(async function () {
    await redisServer.start();
  });
  after(async function () {
    await redisServer.destroy();
  });
  beforeEach(async function () {
    collector = new Collector();
    await collector.start();
    sim = await startSimulator();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const r of replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of replicas.splice(0)) await r.destroy();
    await sim.stop();
    await collector.stop();
  });

  const handlerCalls = (method: string): number =>
    sim.requests.filter((r) => r.method === method && r.path.endsWith('/error-handler')).length;

  it('stopping one replica keeps the handler registered; the last one to stop unregisters it', async function () {
    const flows = registerHandlerFlows({
      redisUrl: redisServer.url,
      prefix: `lh-reg-${process.pid}`,
      leaseSeconds: 2,
      instruments: [{ id: 'i1', baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl }],
      collectorUrl: collector.url,
    });
    const credentials = { 'server-i1': { username: USER.username, password: USER.password } };
    for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentials));
    await Promise.all(replicas.map((r) => r.start()));
    await until(() => handlerCalls('POST') === 2, 'both replicas registered the handler', 15000);

    await replicas[0].stop(); // SIGTERM: its nodes close (an unregistration would be sent before it exits)
    // the other replica still handles B errors: the handler stays registered on the instrument
    assert.equal(handlerCalls('DELETE'), 0, 'the first replica to stop left the handler registered');

    await replicas[1].stop();
    await until(() => handlerCalls('DELETE') === 1, 'the last replica unregistered it', 10000);
  });
});
