// Issue 35: the state document (and the fleet tab) keeps each pending error's answer link also for errors whose raised
// msg never reached the answer page here (an error watch with Remember on raises nothing it saw before a restart).
import assert from 'node:assert/strict';

import { helper } from '../support/runtime';
import { fetchText, loadWithPage, usePageSuite } from './lh-answer-page.support';
import { bServerFlow, messageWhere, stateNode } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type Doc = { errors: { list: { id: string; title: string; answerUrl?: string; answerExpires?: string }[] } };

describe('lh-answer-page: links for errors the watch lists without raising them here (issue 35)', function () {
  this.timeout(20000);
  const { sim, pageNode } = usePageSuite();

  /** The next document on the `doc` helper node that `check` accepts. */
  const docWhere = async (check: (d: Doc) => boolean): Promise<Doc> =>
    (await messageWhere('doc', (m) => check(m.payload as Doc))).payload as Doc;

  it('an error listed twice without a raised msg through the page gets a working link in the document, once', async function () {
    const server = bServerFlow(sim, { withB: false });
    // the poll is not wired to the page: what a restart with Remember on looks like to the page
    await loadWithPage(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, listen: false, wires: [[], [], []] },
        pageNode({ path: '/lh-answer', wires: [[], []] }),
        stateNode([['doc'], []]),
        { id: 'doc', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    );
    const linked = docWhere((d) => d.errors.list.some((e) => e.answerUrl !== undefined));
    const error = sim.injectPendingError({ title: 'Clot <detected>', severity: 'Error' });
    const doc = await linked;
    const listed = doc.errors.list.find((e) => e.id === error.id);
    assert.ok(listed?.answerUrl, 'the error has its link');
    assert.ok(listed.answerExpires && Date.parse(listed.answerExpires) > Date.now(), 'with its expiry');
    const page = await fetchText(listed.answerUrl);
    assert.equal(page.status, 200);
    assert.match(page.text, /Clot &#60;detected&#62;/);
    assert.match(page.text, /Retry/, 'the page offers the responses: the link names this error');

    // later polls list it again: the same link stays (made once, not once per poll)
    const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    const before = polls();
    const docs: Doc[] = [];
    const node = helper.getNode('doc');
    const on = (msg: Msg): void => void docs.push(msg.payload as Doc);
    node.on('input', on);
    await new Promise<void>((resolve) => {
      const check = (): void => (polls() >= before + 3 ? resolve() : void setTimeout(check, 20));
      check();
    });
    node.removeListener('input', on);
    assert.ok(
      docs.every((d) => d.errors.list.find((e) => e.id === error.id)?.answerUrl === listed.answerUrl),
      'no new link per poll',
    );
  });
});
