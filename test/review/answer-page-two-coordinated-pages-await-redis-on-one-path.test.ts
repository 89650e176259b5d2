/**
 * Review finding (review67, of review65's "a page awaiting its Redis key never takes others' links"): two coordinated
 * answer pages on one path (two instruments of a fleet, both on the default /lh-answer) that both wait for their link
 * key in Redis (after a restart while Redis was away: they retry at growing intervals, up to 5 s). A link of the second
 * page went to the first (the first page waiting takes every link nobody owns yet); once Redis answered, the first read
 * its own key, found the link not its own and refused it with 403 "not made by an answer page of this Node-RED": a valid
 * link called invalid, the person told to answer elsewhere (and while Redis was still away, the first page answered
 * 502 naming its own instrument). Now, when several pages on the path wait, the route waits for their keys and hands
 * the link to the page that signed it; while none can load its key, 503 "reload in a moment", naming no instrument.
 */
import assert from 'node:assert/strict';

import { fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { describeWithRedis, RedisHarness } from '../support/redis-server';
import { helper, nextMessage, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: two coordinated pages on one path waiting for Redis', function () {
  this.timeout(30000);
  const redis = new RedisHarness();
  const { sim, pageNode, pageWithOutputs } = usePageSuite();
  before(async function () {
    await redis.start();
  });
  after(async function () {
    await redis.destroy();
  });

  async function load(): Promise<void> {
    const plain = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    await loadWithPage(
      [
        { id: 'coord', type: 'lh-coordination', url: redis.url, prefix: `lh-review67-await-${process.pid}` },
        {
          id: 'far',
          type: 'lh-server',
          name: 'far instrument',
          baseUrl: 'http://127.0.0.1:9',
          clientKey: 'far1',
          coordination: 'coord',
        },
        pageNode({ id: 'first', server: 'far', path: '/lh-answer', wires: [[], []] }),
        ...plain.nodes,
        ...pageWithOutputs(),
      ],
      plain.credentials,
    );
  }

  it("the second page's link opens after Redis returns, not refused by the first page", async function () {
    await load();
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
    let link = '';
    await until(
      async () => {
        // right after a deploy Redis may still be connecting: that msg goes on without a link
        const out = nextMessage(helper.getNode('out'));
        helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised' });
        link = String((await out).answerUrl ?? '');
        return link !== '';
      },
      'a link signed with the shared key',
      10000,
    );

    // a restart while Redis is away: both pages wait for their key, retrying at growing intervals
    await helper.unload();
    redis.pause(); // away, its keys kept (a network partition)
    await load();
    const warned: string[] = [];
    for (const id of ['first', 'page'])
      (helper.getNode(id) as unknown as { on(e: string, l: () => void): void }).on('call:warn', () => warned.push(id));
    await until(() => warned.includes('first') && warned.includes('page'), 'both pages warned', 15000); // 5 failed reads each: retries 600 ms+ apart
    redis.resume();

    // as a person does while Redis reconnects: reload the page that says to try again (502 before, 503 now)
    let page = await fetchText(link);
    await until(
      async () => {
        if (page.status !== 502 && page.status !== 503) return true;
        page = await fetchText(link);
        return false;
      },
      'a page other than "try again"',
      10000,
    );
    assert.equal(page.status, 200, page.text.replace(/<style>[^]*<\/style>/, '').slice(0, 900));
    assert.match(page.text, /Clot detected/);
    const form = formOf(page.text);
    const retry = form.buttons.find((b) => b.label.startsWith('Retry'));
    assert.ok(retry, page.text.slice(0, 600));
    const audit = nextMessage(helper.getNode('audit'));
    const answered = await fetchText(link.split('?')[0], {
      form: { t: form.t, form: form.form, o: form.o, [retry.name]: retry.value },
    });
    assert.equal(answered.status, 200, answered.text.slice(0, 600));
    assert.equal(((await audit).payload as Msg).outcome, 'answered');
  });
});
