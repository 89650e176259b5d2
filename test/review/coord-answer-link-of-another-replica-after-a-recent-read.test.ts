/**
 * Review finding (answer page behind several Node-REDs): page views share one read of the instrument's error list per
 * 2 s, and a list read before a link was made is not used for it ("a fresh link never shows no longer pending from a
 * list older than its error"). The page knew when a link was made only when it made it itself: a fresh link made by
 * another replica, opened on one that had read the list for another view within the 2 s before the error came, was
 * answered from that older list: "This error is no longer pending on the instrument (answered there, cleared or
 * resolved). Nothing was sent." for an error still waiting. The page now reads when a link was made from its expiry.
 * Real Node-RED processes, a real simulator, a real redis-server.
 */
import { describeWithRedis } from '../support/redis-server';
import { useAnswerPageReplicas } from './answer-page-replicas.support';

describeWithRedis('review: a fresh link made by another replica, opened where the list was read just before', function () {
  this.timeout(120000);
  const { link, opens } = useAnswerPageReplicas(`lh-review-stale-list-${process.pid}`);

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
