/**
 * The answer page behind several Node-REDs sharing one Redis (issue 19): a link made by one replica is answered on
 * any other (the link key is the instrument's, in Redis), and a form posted to two replicas answers once (the used
 * form tokens are shared). Real Node-RED processes, a real simulator, a real redis-server.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { Simulator } from '../../src/simulator';
import { requestText } from '../support/http-text';
import { answerPageFlows, Collector, Replica } from '../support/red-replicas';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

interface Linked {
  kind: string;
  id: string;
  replica: string;
  url?: string;
  outcome?: string;
}

describeWithRedis('coordination: the answer page on several Node-REDs (issue 19)', function () {
  this.timeout(120000);
  const redisServer = new RedisHarness();
  let redis: Redis;
  let collector: Collector;
  let sim: Simulator;
  const replicas: Replica[] = [];
  let run = 0;

  before(async function () {
    await redisServer.start();
    redis = new Redis(redisServer.url);
  });
  after(async function () {
    redis?.disconnect();
    await redisServer.destroy();
  });
  beforeEach(async function () {
    collector = new Collector();
    await collector.start();
    sim = await startSimulator();
    const flows = answerPageFlows(
      {
        redisUrl: redisServer.url,
        prefix: `lh-page-${process.pid}-${++run}`,
        leaseSeconds: 2,
        instruments: [{ id: 'i1', baseUrl: sim.baseUrl }],
        collectorUrl: collector.url,
        interval: 0.3,
      },
      true,
    );
    const credentials = { 'server-i1': { username: USER.username, password: USER.password } };
    for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentials));
    await Promise.all(replicas.map((r) => r.start()));
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const r of replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of replicas.splice(0)) await r.destroy();
    await sim.stop();
    await collector.stop();
  });

  /** The link the holder made for a new error, and the replica that did not make it. */
  async function linkOnOneReplica(): Promise<{ id: string; query: string; maker: Replica; other: Replica }> {
    const id = String(sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }).id);
    await until(() => collector.count('linked', id) > 0, 'a link for the error', 15000);
    const linked = collector.events.find((e) => e.kind === 'linked' && e.id === id) as unknown as Linked;
    assert.ok(linked.url, 'the msg carries an answer link');
    const maker = replicas.find((r) => r.name === linked.replica);
    const other = replicas.find((r) => r.name !== linked.replica);
    assert.ok(maker && other);
    return { id, query: new URL(linked.url).search, maker, other };
  }

  const pageOn = (r: Replica, query: string): string => `http://127.0.0.1:${r.httpPort}/lh/answer${query}`;

  it('a link made by one replica opens the question on the other (the link key is shared in Redis)', async function () {
    const { query, maker, other } = await linkOnOneReplica();
    for (const r of [other, maker]) {
      const page = await requestText(pageOn(r, query), { method: 'GET' });
      assert.equal(
        page.status,
        200,
        `${r.name} (${r === maker ? 'made the link' : 'did not make it'}): ${page.text.replace(/<style[\s\S]*<\/style>/, '').slice(0, 1500)}`,
      );
      assert.match(page.text, /name="form"/, `${r.name} shows the form`);
    }
  });

  it('the photo of a link is held by the replica that made it: the other says so (404) and offers a fresh one', async function () {
    // README, "On the answer page": with several Node-REDs only the one that made the link holds its photo. Behind a
    // load balancer without sticky sessions the page's image request (and msg.snapshotUrl) may reach the other one.
    const { query, maker, other } = await linkOnOneReplica();
    const raised = (r: Replica) => requestText(`${pageOn(r, query)}&photo=raised`, { method: 'GET' });
    const held = await raised(maker);
    assert.equal(held.status, 200, held.text.slice(0, 300));
    assert.match(String(held.headers['content-type']), /^image\/(png|jpeg)$/);
    const missing = await raised(other);
    assert.equal(missing.status, 404);
    assert.match(missing.text, /no photo of the deck from when the error was raised is kept here/);
    const page = await requestText(pageOn(other, query), { method: 'GET' });
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /photo=raised/, 'the other replica links no photo it does not hold');
    assert.match(page.text, /No photo of the deck from when the error was raised is kept here/);
    assert.match(page.text, /Take a fresh photo of the deck/);
    const fresh = await requestText(`${pageOn(other, query)}&photo=fresh`, { method: 'GET' });
    assert.equal(fresh.status, 200, fresh.text.slice(0, 300));
    assert.match(String(fresh.headers['content-type']), /^image\/(png|jpeg)$/);
  });

  it('a form posted to both replicas answers once: the other post is refused as used, nothing sent twice', async function () {
    const { id, query, maker, other } = await linkOnOneReplica();
    const page = await requestText(pageOn(other, query), { method: 'GET' });
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const formToken = /name="form" value="([^"]+)"/.exec(page.text)?.[1];
    assert.ok(formToken, 'the page carries a form token');
    const body = new URLSearchParams({
      t: new URLSearchParams(query).get('t') ?? '',
      form: formToken,
      response: 'Retry',
      by: 'ana',
    }).toString();
    const post = (r: Replica) =>
      requestText(pageOn(r, ''), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, body);
    const [a, b] = await Promise.all([post(other), post(maker)]);
    const statuses = [a.status, b.status].sort();
    assert.deepEqual(statuses, [200, 403], `one answer, one refusal: ${a.status} ${b.status}`);
    await until(() => collector.count('audit', id) > 0, 'the audit record', 10000);
    // the refused post never reached the instrument (refused before any send: no audit record of its own)
    const audits = collector.events.filter((e) => e.kind === 'audit' && e.id === id) as unknown as Linked[];
    assert.deepEqual(
      audits.map((e) => e.outcome),
      ['answered'],
    );
  });

  it('two forms of one error posted at once to two replicas: one answer reaches the instrument, the other is refused before sending', async function () {
    const { id, query, maker, other } = await linkOnOneReplica();
    const t = new URLSearchParams(query).get('t') ?? '';
    const formOf = async (r: Replica): Promise<string> => {
      const page = await requestText(pageOn(r, query), { method: 'GET' });
      const token = /name="form" value="([^"]+)"/.exec(page.text)?.[1];
      assert.ok(token, `${r.name} shows a form`);
      return token;
    };
    // each replica shows its own form (both valid): only the shared answer ledger can keep them from both answering
    const forms = [await formOf(other), await formOf(maker)];
    sim.setFaults({ latencyMs: 400 }); // both replicas read the list before either answer lands
    const puts = (): number =>
      sim.requests.filter(
        (r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime' && String((r.body as { id?: unknown }).id) === id,
      ).length;
    const responses = await Promise.all(
      [other, maker].map((r, i) =>
        requestText(
          pageOn(r, ''),
          { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
          new URLSearchParams({ t, form: forms[i], response: i === 0 ? 'Retry' : 'Abort', by: `person ${i}` }).toString(),
        ),
      ),
    );
    sim.setFaults({});
    assert.equal(puts(), 1, `one answer sent to the instrument (pages: ${responses.map((r) => r.status).join(', ')})`);
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200],
      'both people see an outcome page',
    );
    assert.equal(
      responses.filter((r) => /already|being answered/i.test(r.text)).length,
      1,
      'one page says it was answered already',
    );
    await until(() => collector.count('audit', id) === 2, 'two audit records', 10000);
    const outcomes = (collector.events.filter((e) => e.kind === 'audit' && e.id === id) as unknown as Linked[])
      .map((e) => e.outcome)
      .sort();
    assert.deepEqual(outcomes, ['already-answered', 'answered']);
  });
});
