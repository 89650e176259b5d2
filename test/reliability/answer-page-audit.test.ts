import assert from 'node:assert/strict';

import { answerOnPage, fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { helper, nextMessage, runtimeSettings } from '../support/runtime';

type Msg = Record<string, unknown>;

/** The answer page's audit says who really answered, and never claims a delivery it cannot know. */
describe('answer page: audit', function () {
  this.timeout(20000);
  const { sim, pageWithOutputs } = usePageSuite();
  afterEach(function () {
    runtimeSettings({});
  });

  async function load(timeout?: number): Promise<void> {
    const server = bServerFlow(sim, { withB: false, ...(timeout ? { timeout } : {}) });
    await loadWithPage([...server.nodes, ...pageWithOutputs()], { ...server.credentials, page: { secret: 'audit-test-secret' } });
  }

  async function linkFor(record: Msg): Promise<string> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: record, source: 'A', event: 'raised' });
    return String((await out).answerUrl);
  }

  it('records the httpNodeAuth user as who answered; a typed name goes into `name` and never replaces it', async function () {
    // Node-RED checks the password before the page sees the request (the test helper's app does not: only the user matters here)
    runtimeSettings({
      httpNodeAuth: { user: 'operator', pass: '$2a$08$notAHashThatIsCheckedHere.............................' },
    });
    await load();
    const auth = { Authorization: `Basic ${Buffer.from('operator:bench-pass').toString('base64')}` };
    const error = sim.injectPendingError({ responses: ['Retry', 'Abort'] });
    const link = await linkFor(error as unknown as Msg);
    const page = await fetchText(link, { headers: auth });
    const form = formOf(page.text);
    const button = form.buttons.find((b) => b.label === 'Abort');
    assert.ok(button, page.text);
    const audit = nextMessage(helper.getNode('audit'));
    const answered = await fetchText(link.split('?')[0], {
      form: { t: form.t, form: form.form, o: form.o, by: 'Mallory', [button.name]: button.value },
      headers: auth,
    });
    assert.equal(answered.status, 200, answered.text);
    assert.match(answered.text, /by operator/);
    const a = (await audit).payload as Msg;
    assert.equal(a.by, 'operator');
    assert.equal(a.name, 'Mallory');
  });

  it('without httpNodeAuth, the typed name is who answered', async function () {
    await load();
    const error = sim.injectPendingError();
    const audit = nextMessage(helper.getNode('audit'));
    const answered = await answerOnPage(await linkFor(error as unknown as Msg), 'Retry', 'Dana');
    assert.equal(answered.status, 200);
    const a = (await audit).payload as Msg;
    assert.equal(a.by, 'Dana');
    assert.equal(a.name, 'Dana');
  });

  it('after a timeout says no confirmation was received (the answer may have been applied), and audits it as failed', async function () {
    await load(1000);
    const error = sim.injectPendingError();
    const link = await linkFor(error as unknown as Msg);
    // the answer's PUT (only it) gets no answer: faults switch on as the simulator logs it
    const stop = sim.onRequest((e) => {
      if (e.method === 'PUT' && e.path === '/api/v1/errors/runtime') sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 3000 });
    });
    try {
      const audit = nextMessage(helper.getNode('audit'));
      const answered = await answerOnPage(link, 'Retry', 'Dana');
      assert.match(
        answered.text,
        /No confirmation received: the answer may have been applied\. Check the instrument before answering again\./,
      );
      assert.doesNotMatch(answered.text, /could not be delivered/);
      const a = await audit;
      assert.equal(a.outcome, 'failed');
      assert.match(
        String((a.payload as Msg).reason),
        /^no confirmation received: it may have been applied; check the instrument before answering again/,
      );
    } finally {
      stop();
      sim.clearFaults();
    }
  });
});
