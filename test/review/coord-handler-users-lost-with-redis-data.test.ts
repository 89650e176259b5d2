/**
 * Review finding (the B error handler on several Node-REDs, Redis loses its data): each replica counts itself among
 * the handler's users in Redis when its lh-register-handler starts, and a replica that stops unregisters the handler
 * on the instrument only when no other live replica uses it. The count is written once, at start: after a FLUSHALL
 * (or a Redis restart without persistence, or the key evicted) it was empty, and the next replica to stop (a
 * redeploy, a rolling restart) took itself for the last user and unregistered the handler under the replicas still
 * running: their B errors were no longer theirs to handle. A replica that learns of the loss counts itself again.
 * Real Node-RED processes, a real simulator, a real Redis.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { Simulator } from '../../src/simulator';
import { Collector, registerHandlerFlows, Replica } from '../support/red-replicas';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

describeWithRedis('review: the B error handler after Redis lost its data', function () {
  this.timeout(120000);
  const redisServer = new RedisHarness();
  let redis: Redis;
  let collector: Collector;
  let sim: Simulator;
  const replicas: Replica[] = [];

  before(async function () {
    await redisServer.start();
    redis = new Redis(redisServer.url);
    collector = new Collector();
    await collector.start();
    sim = await startSimulator();
  });
  after(async function () {
    if (this.currentTest?.state === 'failed') for (const r of replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of replicas.splice(0)) await r.destroy();
    await sim?.stop();
    await collector?.stop();
    redis?.disconnect();
    await redisServer.destroy();
  });

  const handlerCalls = (method: string): number =>
    sim.requests.filter((r) => r.method === method && r.path.endsWith('/error-handler')).length;

  it('a replica that stops after the loss leaves the handler registered for the one still running', async function () {
    const prefix = `lh-review-reg-${process.pid}`;
    const flows = registerHandlerFlows({
      redisUrl: redisServer.url,
      prefix,
      leaseSeconds: 2,
      instruments: [{ id: 'i1', baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl }],
      collectorUrl: collector.url,
    });
    const credentials = { 'server-i1': { username: USER.username, password: USER.password } };
    for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentials));
    await Promise.all(replicas.map((r) => r.start()));
    await until(() => handlerCalls('POST') === 2, 'both replicas registered the handler', 15000);

    const users = async (): Promise<number> => {
      const [key] = await redis.keys(`${prefix}:*:registration:*`);
      return key ? redis.zcard(key) : 0;
    };
    assert.equal(await users(), 2, 'both replicas counted among the users');
    // both replicas had a round (they read the group's epoch): one that had not could not tell a loss from a start
    await until(async () => (await redis.hlen(`${prefix}:holding`)) === 2, 'a round of each replica', 10000);

    await redis.flushall(); // a restart without persistence alike
    // the replicas learn of the loss at their next rounds (a third of the lease each); bounded, then the stop says
    await until(async () => (await users()) === 2, 'both replicas counted again', 4000).catch(() => undefined);

    await replicas[0].stop(); // SIGTERM: its nodes close (an unregistration would be sent before it exits)
    assert.equal(handlerCalls('DELETE'), 0, 'the replica that stopped left the handler registered for the other');

    await replicas[1].stop();
    await until(() => handlerCalls('DELETE') === 1, 'the last replica unregistered it', 10000);
  });
});
