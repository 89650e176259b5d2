/**
 * Two real Node-RED processes (r1, r2) watching one simulated instrument through lh-coordination on a real
 * redis-server, an answer page behind the poll; each link made goes to a collector. For the review tests of answer
 * links across replicas: `link(title)` raises an error and waits for its link, `opens(query, replica)` asserts that
 * replica shows the form for it. Call inside a describe block (it registers before / after hooks).
 */
import assert from 'assert';

import Redis from 'ioredis';

import type { Simulator } from '../../src/simulator';
import { requestText } from '../support/http-text';
import { answerPageFlows, Collector, Replica } from '../support/red-replicas';
import { RedisHarness } from '../support/redis-server';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

interface Linked {
  kind: string;
  id: string;
  replica: string;
  url?: string;
}

export interface AnswerPageReplicas {
  replicas: Replica[];
  /** a client on the Redis the replicas share (set from before() on) */
  redis(): Redis;
  link(title: string): Promise<{ query: string; maker: Replica; other: Replica }>;
  opens(query: string, r: Replica): Promise<void>;
}

/** The replicas' lh-coordination key prefix is `prefix`. */
export function useAnswerPageReplicas(prefix: string): AnswerPageReplicas {
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
    const flows = answerPageFlows({
      redisUrl: redisServer.url,
      prefix,
      leaseSeconds: 2,
      instruments: [{ id: 'i1', baseUrl: sim.baseUrl }],
      collectorUrl: collector.url,
      interval: 0.3,
    });
    const credentials = { 'server-i1': { username: USER.username, password: USER.password } };
    for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentials));
    await Promise.all(replicas.map((r) => r.start()));
  });
  after(async function () {
    if (this.currentTest?.state === 'failed') for (const r of replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of replicas.splice(0)) await r.destroy();
    await sim?.stop();
    await collector?.stop();
    redis?.disconnect();
    await redisServer.destroy();
  });

  async function link(title: string): Promise<{ query: string; maker: Replica; other: Replica }> {
    const id = String(sim.injectPendingError({ title, responses: ['Retry', 'Abort'] }).id);
    await until(() => collector.count('linked', id) > 0, `a link for ${title}`, 15000);
    const linked = collector.events.find((e) => e.kind === 'linked' && e.id === id) as unknown as Linked;
    assert.ok(linked.url, 'the msg carries an answer link');
    const maker = replicas.find((r) => r.name === linked.replica);
    const other = replicas.find((r) => r.name !== linked.replica);
    assert.ok(maker && other);
    return { query: new URL(linked.url).search, maker, other };
  }

  async function opens(query: string, r: Replica): Promise<void> {
    const page = await requestText(`http://127.0.0.1:${r.httpPort}/lh/answer${query}`, { method: 'GET' });
    const text = page.text.replace(/<style[\s\S]*<\/style>/, '').slice(0, 600);
    assert.equal(page.status, 200, `${r.name}: ${text}`);
    assert.match(page.text, /name="form"/, `${r.name} shows the form: ${text}`);
  }

  return { replicas, redis: () => redis, link, opens };
}
