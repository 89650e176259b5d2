/**
 * Review finding (issue 35's links for errors the watch lists without raising them): such a link named its error by
 * id, title and severity only, while a link made from a raised msg names it by its time stamp and group too. An
 * instrument that reuses an id for a new error of the same title and severity (ids made from codes, a restart) had
 * the old link answer the new error; and the new error never got a link of its own (the page kept one per id), so
 * the document went on showing the old one. A listed error's link now carries the error's whole identity, and a new
 * error under the id gets its own link.
 */
import assert from 'node:assert/strict';

import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow, messageWhere, stateNode } from '../nodes/lh-error-poll.support';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;
type Doc = { errors: { list: { id: string; title: string; answerUrl?: string }[] } };

describe('review: a listed error’s link never answers a later error under its id', function () {
  this.timeout(20000);
  const { sim, pageNode } = usePageSuite();

  /** The next document on the `doc` helper node that `check` accepts. */
  const docWhere = async (check: (d: Doc) => boolean): Promise<Doc> =>
    (await messageWhere('doc', (m) => check(m.payload as Doc))).payload as Doc;

  it('the id reused for an error of the same title and severity: the old link is refused, the new error gets its own', async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, listen: false, wires: [[], [], []] },
        pageNode({ path: '/lh-answer', wires: [[], []] }),
        stateNode([['doc'], ['events']]),
        { id: 'doc', type: 'helper' },
        { id: 'events', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    );
    const events: Msg[] = [];
    helper.getNode('events').on('input', (m: Msg) => events.push(m));
    const first = sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error', responses: ['Retry', 'Abort'] });
    const linked = await docWhere((d) => d.errors.list.some((e) => e.id === first.id && e.answerUrl !== undefined));
    const oldLink = linked.errors.list.find((e) => e.id === first.id)?.answerUrl as string;

    // the instrument forgets the first error and lists a new one under its id: same title, same severity
    const relinked = docWhere((d) => d.errors.list.some((e) => e.id === first.id && e.answerUrl && e.answerUrl !== oldLink));
    sim.injectPendingError({
      id: first.id,
      reuseId: true,
      title: 'Tip pick-up failed',
      severity: 'Error',
      responses: ['Retry', 'Abort'],
    });

    const newDoc = await relinked;
    const newLink = newDoc.errors.list.find((e) => e.id === first.id)?.answerUrl as string;
    const fresh = await fetchText(newLink);
    assert.equal(fresh.status, 200);
    assert.match(fresh.text, /Retry/, 'the new link asks the new error');

    const old = await fetchText(oldLink);
    assert.doesNotMatch(old.text, /name="response"|type="submit"/, 'the old link offers no answer');
    assert.match(old.text, /different error under this number/);

    const raised = events.filter((m) => (m.payload as Msg).event === 'raised');
    assert.ok(raised.length >= 1, 'the event output told the raised errors');
    for (const m of raised) assert.equal('seen' in (m.payload as Msg), false, 'the event msgs stay as documented');
  });

  it('an error its raised msg linked gets no second link from the list, whatever the polls', async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          listen: false,
          wires: [['page'], [], []],
        },
        pageNode({ path: '/lh-answer', wires: [['linkedMsg'], []] }),
        { id: 'linkedMsg', type: 'helper' },
        { id: 'state', type: 'lh-state', server: 'server', rate: '20', machineInterval: '0', repeat: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    );
    const urls = new Set<string>();
    helper.getNode('doc').on('input', (m: Msg) => {
      for (const e of (m.payload as Doc).errors.list) if (e.answerUrl) urls.add(e.answerUrl);
    });
    const raisedMsg = new Promise<Msg>((resolve) => helper.getNode('linkedMsg').once('input', resolve));
    sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error' });
    const linked = await raisedMsg;
    const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    const before = polls();
    await new Promise<void>((resolve) => {
      const check = (): void => (polls() >= before + 4 ? resolve() : void setTimeout(check, 20));
      check();
    });
    assert.deepEqual([...urls], [linked.answerUrl], 'the raised msg’s link, and only it');
  });
});
