/**
 * Review finding (commit 404427a, the poll's list before each error's event): the state document keeps answer links
 * by source and id, and a 'resolved' event dropped its error's link once no pending error had that id. With the list
 * first, an id the instrument reused for another error is pending again (the new error) when the old one's 'resolved'
 * comes: the old error's link stayed, and the document showed it on the new error until a link of its own came (the
 * page refuses it: "a different error under this number"). A list that shows other errors under an id than the
 * document had drops that id's link.
 */
import assert from 'node:assert/strict';

import { loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow, messageWhere, pollsDone, stateNode } from '../nodes/lh-error-poll.support';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;
type Doc = { errors: { pending: number; list: { id: string; title: string; answerUrl?: string }[] } };

describe('review: a reused id never shows the old error’s answer link on the new error', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite();

  it('the id reused for an error of another title: no document shows the old link on it', async function () {
    const server = bServerFlow(sim, { withB: false });
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
    const first = sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error' });
    const linked = await messageWhere('doc', (m) =>
      (m.payload as Doc).errors.list.some((e) => e.id === first.id && e.answerUrl !== undefined),
    );
    const oldLink = (linked.payload as Doc).errors.list.find((e) => e.id === first.id)?.answerUrl as string;

    const docs: Doc[] = [];
    helper.getNode('doc').on('input', (m: Msg) => docs.push(m.payload as Doc));
    sim.injectPendingError({ id: first.id, reuseId: true, title: 'Door open', severity: 'Error' });
    await messageWhere('doc', (m) =>
      (m.payload as Doc).errors.list.some((e) => e.title === 'Door open' && e.answerUrl && e.answerUrl !== oldLink),
    );
    await pollsDone(sim, 1);
    const shown = docs.flatMap((d) => d.errors.list).filter((e) => e.title === 'Door open');
    assert.ok(shown.length > 0, 'the new error was in the documents');
    assert.deepEqual(
      shown.filter((e) => e.answerUrl === oldLink),
      [],
      'the old error’s link on the new error',
    );
  });
});
