/**
 * Review (review33, the answer page under coordination). The used form tokens live in Redis only: Redis restored
 * from a snapshot older than a form's answer forgets that the form was used, and the same form posted again passes
 * the token check. What keeps the instrument from acting twice is the answer this Node-RED remembers (its own answer
 * ledger: the page says "already answered"), the instrument's list read afresh before any answer (an answered error is
 * no longer pending), and the shared answer ledger each replica writes its claims back to once it learns of the loss.
 * README, "Redis loses its data". Real redis-server restarted on a copy of an older dump.rdb, a real Node-RED runtime.
 */
import assert from 'node:assert/strict';

import { coordinatedPageLink, fetchText, formOf, usePageSuite } from '../nodes/lh-answer-page.support';
import { describeWithRedis, useOlderDumps } from '../support/redis-server';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;

describeWithRedis('review: an answer form posted again after Redis came back from an older snapshot', function () {
  this.timeout(60000);
  const suite = usePageSuite();
  const { sim } = suite;
  const dumps = useOlderDumps();
  let run = 0;

  const answers = (): Msg[] => answersSent<Msg>(sim);

  it('the used token is gone with the data, and still the error is answered once', async function () {
    const prefix = `lh-form-restore-${process.pid}-${++run}`;
    const { link, t, post } = await coordinatedPageLink(suite, dumps.harness.url, prefix);
    const form = formOf((await fetchText(link)).text);
    const older = await dumps.snapshot(); // before the answer
    const first = await fetchText(post, { form: { t, form: form.form, response: 'Retry' } });
    assert.equal(first.status, 200, first.text.slice(-400));
    const forms = `${prefix}:*:shared:forms:*`;
    assert.ok((await dumps.redis.keys(forms)).length > 0, 'the used token is in Redis');

    await dumps.restartFrom(older);
    await dumps.reconnected();
    assert.deepEqual(await dumps.redis.keys(forms), [], 'the used token went with the data');
    const again = await fetchText(post, { form: { t, form: form.form, response: 'Abort' } });
    assert.match(again.text, /Already answered with <b>Retry<\/b>/);
    assert.deepEqual(
      answers().map((b) => b.selectedResponse),
      ['Retry'],
      'one answer reached the instrument',
    );
  });
});
