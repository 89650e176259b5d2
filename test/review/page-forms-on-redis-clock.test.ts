/**
 * Review (review33, the answer page under coordination). With an lh-coordination node the used form tokens live in
 * Redis: a sorted set scored by when each form expires, pruned by Redis's clock (TIME), while the expiry was the
 * replica's clock (the form's issue time + 30 min) and the "forms full" check read the replica's clock too.
 * - A replica whose clock is behind Redis's: a form in its last minutes (on the replica's clock) was recorded with a
 *   time Redis had already passed, and pruned at the next use: the same form posted again was taken as new. README:
 *   "a used token is never forgotten before its form expires, so no form can be replayed".
 * - A replica whose clock is ahead: forms that had expired for it still filled the set on Redis's clock (new forms
 *   refused as full), while the check read its own clock, found the set not full and answered "form already used"
 *   (403, "open the link again") instead of the 429 page. README: "when full, further forms are refused ... with a
 *   429 page saying so and to answer on the instrument".
 * Now a form counts as expired once Redis's clock says so too (it is refused, never recorded for a moment), and the
 * full check counts on Redis's clock, as the use does. Real redis-server, a real Node-RED runtime and simulator; the
 * replica's clock is faked (Date only), Redis's is real.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { MAX_USED_PER_ERROR } from '../../src/nodes/lh-answer-page/form-tokens';
import { CoordinatedLink, coordinatedPageLink, fetchText, formOf, usePageSuite } from '../nodes/lh-answer-page.support';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;
const MIN = 60_000;

describeWithRedis("review: the answer page's used forms under coordination, a replica's clock off Redis's", function () {
  this.timeout(60000);
  const suite = usePageSuite();
  const { sim } = suite;
  const db = useRedis();
  let run = 0;
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });
  /**
   * The replica's clock: `offset` ms from the real one (Redis's), running on; installed before the Node-RED loads (its
   * nodes keep the clock they were made with). `later(ms)` moves it on (a person taking that long).
   */
  function replicaClock(offset: number): { later(ms: number): void } {
    const fake = FakeTimers.install({ toFake: ['Date'], now: Date.now() + offset, shouldAdvanceTime: true });
    clock = fake;
    return { later: (ms) => fake.setSystemTime(Date.now() + ms) };
  }

  const answers = (): unknown[] => answersSent(sim);

  /** A coordinated Node-RED with an answer page on a replica clock `offset` ms off Redis's, and its link to a new error. */
  async function linked(offset: number): Promise<CoordinatedLink & { later(ms: number): void }> {
    const { later } = replicaClock(offset);
    const prefix = `lh-forms-clock-${process.pid}-${++run}`;
    return { ...(await coordinatedPageLink(suite, db.harness.url, prefix)), later };
  }

  it('a replica 10 min behind Redis: a form in its last minutes is never answered twice', async function () {
    // the person opened the form 25 min before posting it (Redis's clock cannot be set back: the replica's clock is,
    // 25 min more while the form is shown)
    const { link, t, post, later } = await linked(-35 * MIN);
    const form = formOf((await fetchText(link)).text);
    assert.ok(form.form, 'the page shows a form');
    later(25 * MIN); // posted now: 5 min left on the replica's clock, expired 5 min ago on Redis's
    const first = await fetchText(post, { form: { t, form: form.form, response: 'Nope' } });
    const again = await fetchText(post, { form: { t, form: form.form, response: 'Retry' } });
    assert.equal(again.status, 403, `the form posted again was taken: ${first.status} then ${again.status}`);
    assert.match(again.text, /This form was already used or has expired/);
    assert.equal(
      answers().filter((b) => (b as Msg).selectedResponse === 'Retry').length,
      0,
      'the form posted again reached the instrument',
    );
  });

  it('a replica 10 min ahead of Redis: a set full on Redis’s clock gives the 429 page, not "form already used"', async function () {
    this.timeout(120000);
    const { link, t, post, later } = await linked(10 * MIN);
    // an error's whole share posted (answers the instrument refuses); 31 min later they have expired for the replica,
    // and are live for 9 more minutes on Redis's clock
    for (let i = 0; i < MAX_USED_PER_ERROR; i++) {
      const form = formOf((await fetchText(link)).text);
      const res = await fetchText(post, { form: { t, form: form.form, response: 'Nope' } });
      assert.equal(res.status, 502, `post ${i}: ${res.status}`);
    }
    later(31 * MIN);
    const form = formOf((await fetchText(link)).text); // the operator opens the link: the page shows the form
    const refused = await fetchText(post, { form: { t, form: form.form, response: 'Retry' } });
    assert.equal(refused.status, 429, refused.text.replace(/<style[\s\S]*<\/style>/, '').slice(0, 600));
    assert.match(refused.text, /Too many answer forms were posted for this error/);
    assert.equal(answers().filter((b) => (b as Msg).selectedResponse === 'Retry').length, 0);
  });
});
