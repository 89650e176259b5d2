/**
 * Review finding (answer page behind several Node-REDs): page views share one read of the instrument's error list per
 * 2 s, and a list read before a link was made is not used for it ("a fresh link never shows no longer pending from a
 * list older than its error"). The page knew when a link was made only when it made it itself: a fresh link made by
 * another replica, opened on one that had read the list for another view within the 2 s before the error came, was
 * answered from that older list: "This error is no longer pending on the instrument (answered there, cleared or
 * resolved). Nothing was sent." for an error still waiting. The page now reads when a link was made from its expiry.
 * Real Node-RED processes, a real simulator, a real redis-server.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { Simulator } from '../../src/simulator';
import { requestText } from '../support/http-text';
import { Collector, FlowNode, Replica, watchFlows } from '../support/red-replicas';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

interface Linked {
  kind: string;
  id: string;
  replica: string;
  url?: string;
}

/** watchFlows with an answer page behind the poll: each link goes to the collector. */
function pageFlows(options: Parameters<typeof watchFlows>[0]): FlowNode[] {
  const flows = watchFlows(options);
  const poll = flows.find((n) => n.id === 'poll-i1');
  if (!poll) throw new Error('no poll node');
  poll.wires = [['page'], [], []];
  flows.push(
    {
      id: 'page',
      type: 'lh-answer-page',
      z: 'tab',
      server: 'server-i1',
      path: '/lh/answer',
      publicUrlType: 'str',
      publicUrl: 'http://127.0.0.1:9',
      expiryHours: 1,
      wires: [['to-linked'], []],
    },
    {
      id: 'to-linked',
      type: 'function',
      z: 'tab',
      func: `msg.payload = { kind: 'linked', id: String(msg.errorId), replica: env.get('LH_REPLICA'), url: msg.answerUrl }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
      outputs: 1,
      wires: [['post']],
    },
  );
  return flows;
}

describeWithRedis('review: a fresh link made by another replica, opened where the list was read just before', function () {
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
    const flows = pageFlows({
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

  const prefix = `lh-review-stale-list-${process.pid}`;
  it('it shows the question, not "no longer pending"', async function () {
    const first = await link('Clot detected');
    const viewer = first.other;
    // a view on the replica that did not make the link reads the list (shared for 2 s)
    await opens(first.query, viewer);
    // a second error comes within those 2 s; whichever replica links it, it opens where the list was just read
    const second = await link('Door open');
    for (const r of [viewer, second.maker, second.other]) await opens(second.query, r);
  });
});
