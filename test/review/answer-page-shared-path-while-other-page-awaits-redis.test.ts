/**
 * Several answer pages may share a path (the default `/lh-answer` for every instrument): each answers the links it
 * signed. A page whose lh-server is coordinated claims every link on the path while it waits for the link key shared
 * in Redis (it cannot tell yet whether it signed a link), and it was asked first when it came first in the flows. So
 * while Redis was away (or still connecting at start), the links of the other instruments' pages on that path, which
 * need no Redis at all, got an error page or "this link is not valid": nobody could answer their errors from a
 * notification. A page that verifiably signed the link now takes it first; one still waiting for its key only gets
 * the links no page here signed.
 */
import assert from 'node:assert/strict';

import { fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { freePort } from '../support/free-port';
import { helper, nextMessage, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: a page sharing its path with a coordinated page that waits for Redis', function () {
  this.timeout(20000);
  const { sim, pageNode, pageWithOutputs } = usePageSuite();

  it("the other instrument's link opens and answers, GET and POST, while Redis is away", async function () {
    const nobody = await freePort(); // no Redis listens here: the coordinated page waits for its key throughout
    const plain = serverFlow(sim, { withB: false });
    await loadWithPage(
      [
        { id: 'coord', type: 'lh-coordination', url: `redis://127.0.0.1:${nobody}`, prefix: `lh-review-await-${process.pid}` },
        {
          id: 'far',
          type: 'lh-server',
          name: 'far instrument',
          baseUrl: 'http://127.0.0.1:9',
          clientKey: 'far1',
          coordination: 'coord',
        },
        pageNode({ id: 'waiting', server: 'far', path: '/lh-answer', wires: [[], []] }),
        ...plain.nodes,
        ...pageWithOutputs(),
      ],
      { ...plain.credentials, page: { secret: 'plain-page-secret' }, waiting: { secret: 'waiting-page-secret' } },
    );
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised' });
    const link = String((await out).answerUrl);
    assert.match(link, /\?t=/);

    const page = await fetchText(link);
    assert.equal(page.status, 200, page.text.slice(0, 600));
    assert.match(page.text, /Clot detected/);
    const form = formOf(page.text);
    const retry = form.buttons.find((b) => b.label.startsWith('Retry'));
    assert.ok(retry, page.text.slice(0, 600));
    const audit = nextMessage(helper.getNode('audit'));
    const answered = await fetchText(link.split('?')[0], {
      form: { t: form.t, form: form.form, o: form.o, [retry.name]: retry.value },
    });
    assert.equal(answered.status, 200, answered.text.slice(0, 600));
    assert.match(answered.text, /Answered/);
    assert.equal(((await audit).payload as Msg).outcome, 'answered');
  });
});
