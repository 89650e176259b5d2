/**
 * Issue 17.1: instruments reuse error ids. An answer prepared for one error (a page form, a policy default, a flow
 * msg) is never sent to another error listed later under the same id, and a new error under a reused id is raised.
 */
import assert from 'node:assert/strict';

import { collect, helper, nextMessage } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';
import { fetchText, formOf, loadWithPage, usePageSuite } from './lh-answer-page.support';
import { bServerFlow, pollsDone } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('reused error ids: answer only the error that was seen, raise every error once', function () {
  this.timeout(30000);
  const { sim, web, pageNode, pageWithOutputs } = usePageSuite();

  const puts = (): Msg[] => answersSent<Msg>(sim);
  const tip = { id: '7', title: 'Tip pickup failed', severity: 'Error' as const, responses: ['Retry', 'Abort'] };
  const arm = {
    id: '7',
    title: 'Arm collision: gripper jammed, do NOT retry',
    severity: 'Fatal' as const,
    responses: ['Retry', 'Abort'],
    reuseId: true,
  };

  async function load(nodes: Msg[]): Promise<void> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage([...server.nodes, ...nodes], { ...server.credentials, page: { secret: 'test-secret-not-shown' } });
  }

  /** An lh-answer-error node 'answer' (output: helper 'answered') beside the page (links: helper 'out'). */
  const loadAnswerAndPage = (): Promise<void> =>
    load([
      { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['answered']] },
      { id: 'answered', type: 'helper' },
      pageNode({ path: '/lh-answer', wires: [['out'], []] }),
      { id: 'out', type: 'helper' },
    ]);

  it('a page form shown for "Tip pickup failed" does not answer "Arm collision" listed later under id 7; the page says so', async function () {
    await load(pageWithOutputs());
    const first = sim.injectPendingError(tip);
    const linked = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: first, source: 'A', event: 'raised' });
    const link = String((await linked).answerUrl);
    const page = await fetchText(link);
    const form = formOf(page.text);
    assert.match(page.text, /Tip pickup failed/);

    sim.injectPendingError(arm); // the instrument restarted: id 7 is another error now
    const audit = nextMessage(helper.getNode('audit'));
    const posted = await fetchText(link.split('?')[0], { form: { t: form.t, form: form.form, response: 'Retry' } });
    assert.doesNotMatch(posted.text, /Answered/);
    assert.match(
      posted.text,
      /different error under this number: &#34;Arm collision: gripper jammed, do NOT retry&#34; \(Fatal\)/,
    );
    assert.match(posted.text, /<h1>Tip pickup failed<\/h1>/, 'the page names the error the link was made for');
    assert.equal(puts().length, 0, 'nothing was sent to the instrument');
    assert.equal((await audit).outcome, 'changed');
    const again = await fetchText(link);
    assert.match(again.text, /different error under this number/, 'the link shows the same on a later visit');
    assert.equal(formOf(again.text).buttons.length, 0);
  });

  it('a page form for an id the instrument lists for two different errors sends nothing and says why (issue 29.5)', async function () {
    await load(pageWithOutputs());
    const first = sim.injectPendingError(tip);
    sim.injectPendingError({ ...arm, reuseId: false, shareId: true });
    const linked = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: first, source: 'A', event: 'raised' });
    const link = String((await linked).answerUrl);
    const form = formOf((await fetchText(link)).text);
    const audit = nextMessage(helper.getNode('audit'));
    const posted = await fetchText(link.split('?')[0], { form: { t: form.t, form: form.form, response: 'Retry' } });
    assert.match(posted.text, /Nothing was sent: the instrument lists several different errors under this number/);
    assert.match(posted.text, /Tip pickup failed/);
    assert.equal(puts().length, 0, 'nothing was sent to the instrument');
    assert.equal((await audit).outcome, 'ambiguous');
  });

  it('an answer a flow gave by msg.errorId alone does not show as the answer of a new error under that id: its page offers the form', async function () {
    await loadAnswerAndPage();
    sim.injectPendingError(tip);
    const done = nextMessage(helper.getNode('answered'));
    helper.getNode('answer').receive({ errorId: '7', selectedResponse: 'Retry' });
    assert.equal((await done).outcome, 'answered');
    const second = sim.injectPendingError(arm); // no poll in between: nothing saw the first error go
    const linked = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: second, source: 'A', event: 'raised' });
    const page = await fetchText(String((await linked).answerUrl));
    assert.doesNotMatch(page.text, /Already answered/, 'Retry went to "Tip pickup failed", not to the Fatal error');
    assert.match(page.text, /Arm collision/);
    assert.deepEqual(
      formOf(page.text).buttons.map((b) => b.label),
      ['Retry', 'Abort'],
    );
  });

  it('a page for a reused id never shows the answer the earlier error under that id got, once the new error is over too', async function () {
    await loadAnswerAndPage();
    const first = sim.injectPendingError(tip);
    const done = nextMessage(helper.getNode('answered'));
    helper.getNode('answer').receive({ payload: first, selectedResponse: 'Retry', answeredBy: 'alice' });
    assert.equal((await done).outcome, 'answered');
    const second = sim.injectPendingError(arm);
    const linked = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: second, source: 'A', event: 'raised' });
    const link = String((await linked).answerUrl);
    sim.resolvePendingError('7'); // the Fatal error was dealt with at the instrument
    const page = await fetchText(link);
    assert.doesNotMatch(page.text, /Retry/, 'the Retry given to "Tip pickup failed" is not shown as this error\'s answer');
    assert.doesNotMatch(page.text, /Already answered|Answered /);
    assert.match(page.text, /no longer pending/i);
  });

  it('a form shown for "Tip pickup failed" cannot be posted with the link of the error that reused id 7', async function () {
    await load([pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }]);
    const first = sim.injectPendingError(tip);
    const tipLink = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: first, source: 'A', event: 'raised' });
    const tipForm = formOf((await fetchText(String((await tipLink).answerUrl))).text);
    const second = sim.injectPendingError(arm);
    const armLink = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: second, source: 'A', event: 'raised' });
    const armToken = new URL(String((await armLink).answerUrl)).searchParams.get('t') ?? '';
    const posted = await fetchText(`${web.url}/lh-answer`, { form: { t: armToken, form: tipForm.form, response: 'Retry' } });
    assert.equal(posted.status, 403);
    assert.match(posted.text, /already used or has expired/);
    assert.equal(puts().length, 0, 'nothing sent to the Fatal error');
  });

  it('a policy default chosen for "Tip pickup failed" is not sent to the Fatal error under the reused id: escalated with the reason', async function () {
    await load([
      {
        id: 'policy',
        type: 'lh-error-policy',
        server: 'server',
        rules: [
          {
            source: 'any',
            minSeverity: '',
            pattern: 'tip pickup',
            code: '',
            mode: 'semi-automatic',
            answer: 'Retry',
            delay: 0.3,
          },
        ],
        wires: [['notify'], ['auto'], ['escalate']],
      },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
    ]);
    const first = sim.injectPendingError(tip);
    const autos = collect(helper.getNode('auto'));
    const escalated = nextMessage(helper.getNode('escalate'));
    helper.getNode('policy').receive({ payload: first, source: 'A', event: 'raised', topic: 'Tip pickup failed' });
    sim.injectPendingError(arm);
    const msg = await escalated;
    assert.equal(msg.outcome, 'changed');
    assert.match(
      String((msg.payload as Msg).reason),
      /now lists "Arm collision: gripper jammed, do NOT retry", Fatal under that id/,
    );
    assert.equal(puts().length, 0);
    assert.equal(autos.length, 0);
  });

  it('a flow answer (lh-answer-error with the msg lh-error-poll emitted) reaches Catch as "changed" and sends nothing', async function () {
    await load([
      { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['out']] },
      { id: 'out', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['answer'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ]);
    const first = sim.injectPendingError(tip);
    sim.injectPendingError(arm);
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('answer').receive({ payload: first, selectedResponse: 'Retry' });
    const msg = await caught;
    assert.equal(msg.outcome, 'changed');
    // the package's error as the msg carried it (the catch node keeps it in msg._error, on 3.1 and 4)
    assert.equal((msg._error as Msg).kind, 'changed');
    assert.equal(puts().length, 0);
    // the same error, still listed: answered
    const fresh = sim.state.pendingErrors.find((e) => e.id === '7');
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('answer').receive({ payload: fresh, selectedResponse: 'Abort' });
    assert.equal((await out).outcome, 'answered');
    assert.equal(puts().length, 1);
  });

  it('"Door open during run", listed briefly under the id of a resolved error, is raised (notification, link, policy)', async function () {
    await load([
      {
        id: 'poll',
        type: 'lh-error-poll',
        server: 'server',
        source: 'A',
        interval: 0.5,
        listen: false,
        wires: [['raised'], ['resolved'], []],
      },
      { id: 'raised', type: 'helper' },
      { id: 'resolved', type: 'helper' },
    ]);
    const raised = collect(helper.getNode('raised'));
    const resolved = collect(helper.getNode('resolved'));
    sim.injectPendingError(tip);
    await until(() => raised.length === 1, 'the first error raised');
    sim.resolvePendingError('7');
    await until(() => resolved.length === 1, 'the first error resolved');
    sim.injectPendingError({ id: '7', title: 'Door open during run', severity: 'Error', reuseId: true });
    await until(() => raised.length === 2, 'the door error raised');
    assert.equal((raised[1].payload as Msg).title, 'Door open during run');
    sim.resolvePendingError('7');
    await until(() => resolved.length === 2, 'the door error resolved');
    await pollsDone(sim, 2);
    assert.equal(raised.length, 2, 'each error once');
  });
  it('through Node-RED, five errors in turn under id 7: each raised once, each link answers only its own error', async function () {
    await load([
      {
        id: 'poll',
        type: 'lh-error-poll',
        server: 'server',
        source: 'A',
        interval: 0.3,
        listen: false,
        wires: [['page'], [], []],
      },
      ...pageWithOutputs(),
    ]);
    const linked = collect(helper.getNode('out'));
    const links: { title: string; url: string; page: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const title = `Error ${i} under a reused id`;
      sim.injectPendingError({
        id: '7',
        title,
        severity: i % 2 ? 'Fatal' : 'Error',
        responses: ['Retry', 'Abort'],
        reuseId: true,
      });
      await until(() => linked.some((m) => (m.payload as Msg).title === title), `${title} raised and linked`);
      const url = String(linked.find((m) => (m.payload as Msg).title === title)?.answerUrl);
      links.push({ title, url, page: (await fetchText(url)).text });
    }
    const audits = collect(helper.getNode('audit'));
    for (const link of links) {
      const form = formOf(link.page);
      if (form.buttons.length === 0) continue; // the view came after the id was reused: no form to submit
      const posted = await fetchText(link.url.split('?')[0], { form: { t: form.t, form: form.form, response: 'Abort' } });
      if (link === links[4]) assert.match(posted.text, /Answered/, 'the error listed now is answered');
      else assert.match(posted.text, /different error under this number/, `${link.title}: nothing sent to the error listed now`);
    }
    await until(() => audits.length >= 1, 'the audit of the answer');
    assert.equal(puts().length, 1, 'one answer sent, to the last error');
    assert.equal(sim.state.pendingErrors.length, 0);
    await pollsDone(sim, 2);
    const titles = linked.map((m) => (m.payload as Msg).title);
    assert.deepEqual(
      titles,
      links.map((l) => l.title),
      'each error raised (and linked) exactly once',
    );
  });
});
