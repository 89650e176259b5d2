import assert from 'node:assert/strict';
import path from 'path';

import FakeTimers from '@sinonjs/fake-timers';

import { MAX_USED_PER_ERROR } from '../../src/nodes/lh-answer-page/form-tokens';
import { collect, helper, nextMessage } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { answerOnPage, fetchText, formOf, loadWithPage, usePageSuite } from './lh-answer-page.support';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('lh-answer-page', function () {
  this.timeout(20000);
  const { sim, web, pageNode, pageWithOutputs } = usePageSuite();

  const puts = (): unknown[] => answersSent(sim);
  const submissions = (): { path: string; body: unknown }[] => recoverySubmissions(sim);

  async function load(page: Msg = {}, withB = false): Promise<void> {
    const server = withB ? bServerFlow(sim) : bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        ...pageWithOutputs(page),
        { id: 'catcher', type: 'catch', scope: ['page'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    );
  }

  async function linkFor(record: Msg, source: 'A' | 'B', extra: Msg = {}): Promise<Msg> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: record, source, event: 'raised', notification: 'sim: Error Clot', ...extra });
    return out;
  }

  it('adds a signed msg.answerUrl under the public URL and appends the link line to msg.notification', async function () {
    await load();
    const error = sim.injectPendingError({ title: 'Clot detected' });
    const msg = await linkFor(error as unknown as Msg, 'A', { topic: 'kept' });
    const url = String(msg.answerUrl);
    assert.match(url, new RegExp(`^${web.url}/lh-answer\\?t=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    assert.equal(msg.notification, `sim: Error Clot\nAnswer: ${url}`);
    assert.equal(msg.topic, 'kept');
    assert.ok(Math.abs(Date.parse(String(msg.answerExpires)) - Date.now() - 24 * 3600_000) < 60_000);
    assert.ok(!url.includes(sim.baseUrl.replace('http://', '')), 'the instrument URL is in the link');
    assert.ok(!JSON.stringify(msg).includes('test-secret-not-shown'));

    // resolved msgs pass unchanged
    const resolved = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'resolved' });
    assert.equal((await resolved).answerUrl, undefined);
  });

  it('shows the error on GET without changing anything; the button answers once; a second visit shows who answered', async function () {
    await load();
    const error = sim.injectPendingError({ title: 'Clot detected', message: 'Channel 2', responses: ['Retry', 'Abort'] });
    const link = String((await linkFor(error as unknown as Msg, 'A')).answerUrl);
    const page = await fetchText(link, { headers: { 'User-Agent': 'Slackbot-LinkExpanding 1.0' } });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.deepEqual(
      formOf(page.text).buttons.map((b) => b.label),
      ['Retry', 'Abort'],
    );
    assert.match(page.text, /Clot detected/);
    assert.match(page.text, /UTC[+-]\d\d:\d\d/, 'the time carries its zone');
    assert.equal(puts().length, 0, 'a GET answered the error');

    const audit = nextMessage(helper.getNode('audit'));
    const answered = await answerOnPage(link, 'Abort', 'Dana');
    assert.equal(answered.status, 200);
    assert.match(answered.text, /Answered with <b>Abort<\/b> by Dana/);
    assert.equal(puts().length, 1);
    assert.equal((puts()[0] as Msg).selectedResponse, 'Abort');
    const a = await audit;
    assert.equal(a.outcome, 'answered');
    assert.equal((a.payload as Msg).by, 'Dana');
    assert.equal((a.payload as Msg).response, 'Abort');
    assert.equal(a.errorId, error.id);

    const again = await fetchText(link);
    assert.equal(again.status, 200);
    assert.match(again.text, /Already answered with <b>Abort<\/b> by Dana at \d{4}-\d\d-\d\d/);
    assert.equal(formOf(again.text).buttons.length, 0);
    assert.equal(puts().length, 1);
  });

  it('refuses a POST without a valid one-time form token, and a used token, sending nothing', async function () {
    await load();
    const error = sim.injectPendingError();
    const link = String((await linkFor(error as unknown as Msg, 'A')).answerUrl);
    const t = new URL(link).searchParams.get('t') ?? '';
    const none = await fetchText(link.split('?')[0], { form: { t, response: 'Retry' } });
    assert.equal(none.status, 403);
    const forged = await fetchText(link.split('?')[0], { form: { t, form: 'made-up', response: 'Retry' } });
    assert.equal(forged.status, 403);
    assert.equal(puts().length, 0);

    const form = formOf((await fetchText(link)).text);
    const refusedFirst = await fetchText(link.split('?')[0], { form: { t, form: form.form, response: 'Nope' } });
    assert.equal(refusedFirst.status, 502);
    assert.match(refusedFirst.text, /refused the answer: selectedResponse must be one of the responses/);
    const reused = await fetchText(link.split('?')[0], { form: { t, form: form.form, response: 'Retry' } });
    assert.equal(reused.status, 403, 'a form token worked twice');
    assert.equal(puts().length, 0);
  });

  it('an error whose forms were all used up (200 posted in 30 min) says so and where to answer, not "open the link again"', async function () {
    this.timeout(90_000); // 200 forms posted, each read back from the instrument: 1.3 s quiet, over 20 s at load 10
    await load();
    const error = sim.injectPendingError({ responses: ['Retry', 'Abort'] });
    const link = String((await linkFor(error as unknown as Msg, 'A')).answerUrl);
    const t = new URL(link).searchParams.get('t') ?? '';
    // someone with the link posts forms with an answer the instrument refuses, one error's whole share
    for (let i = 0; i < MAX_USED_PER_ERROR; i++) {
      const form = formOf((await fetchText(link)).text);
      assert.equal((await fetchText(link.split('?')[0], { form: { t, form: form.form, response: 'Nope' } })).status, 502);
    }
    const form = formOf((await fetchText(link)).text); // the operator opens the link: the page still shows the form
    const refused = await fetchText(link.split('?')[0], { form: { t, form: form.form, response: 'Retry' } });
    assert.equal(refused.status, 429);
    assert.match(refused.text, /Too many answer forms were posted for this error/);
    assert.match(refused.text, /Answer on the instrument/);
    assert.doesNotMatch(refused.text, /Open the link again to answer/, 'opening it again would be refused again');
    assert.equal(puts().filter((b) => (b as Msg).selectedResponse === 'Retry').length, 0);
  });

  it('refuses forged, altered and expired links with a plain 403 page', async function () {
    await load();
    const error = sim.injectPendingError();
    const link = String((await linkFor(error as unknown as Msg, 'A')).answerUrl);
    const [base, query] = link.split('?t=');
    const [claims, sig] = query.split('.');
    const altered = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), e: 'other' }),
    ).toString('base64url');
    for (const bad of [`${base}?t=${altered}.${sig}`, `${base}?t=${claims}.${sig.slice(0, -2)}AA`, `${base}?t=garbage`, base]) {
      const res = await fetchText(bad);
      assert.equal(res.status, 403, bad);
      assert.match(res.text, /This link is not valid/);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    }
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() + 24 * 3600_000 + 1000 });
    try {
      assert.equal((await fetchText(link)).status, 403);
    } finally {
      clock.uninstall();
    }
    assert.equal((await fetchText(link)).status, 200);
  });

  it('B errors: one button per action with the default marked; the action goes out as recovery or action', async function () {
    sim.state.handlers.add('nodered1');
    await load({}, true);
    const error = sim.injectInstrumentError({ title: 'Aspiration error' });
    const link = String((await linkFor(error as unknown as Msg, 'B')).answerUrl);
    const page = await fetchText(link);
    const form = formOf(page.text);
    assert.deepEqual(
      form.buttons.map((b) => b.value),
      ['#0', '#1', '#2', '#3'],
    );
    assert.match(page.text, /class="default">Retry \(default\)/);
    const res = await answerOnPage(link, '4');
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /Answered with <b>Abort the run \(action 4\)<\/b>/);
    assert.equal(submissions().length, 1);
    assert.match(submissions()[0].path, /\/action$/);
    assert.equal((submissions()[0].body as Msg).errorHandlingKey, 'nodered1');
  });

  it("shows the instrument's refusal and keeps the error answerable", async function () {
    await load({}, true); // no handler registered: the instrument refuses
    const error = sim.injectInstrumentError();
    const link = String((await linkFor(error as unknown as Msg, 'B')).answerUrl);
    const audit = collect(helper.getNode('audit'));
    const res = await answerOnPage(link, '1');
    assert.equal(res.status, 502);
    assert.match(res.text, /The instrument refused the answer: submit-recovery for error .* was refused/);
    assert.equal(audit[0]?.outcome, 'refused');
    sim.state.handlers.add('nodered1');
    const second = await answerOnPage(link, '1');
    assert.equal(second.status, 200, second.text);
    assert.equal(submissions().length, 2);
  });

  it('two page nodes on one path each answer the links they signed', async function () {
    const server = bServerFlow(sim, { withB: false });
    const pageOf = (id: string): Msg => pageNode({ id, wires: [[`${id}-out`], []] });
    await loadWithPage(
      [...server.nodes, pageOf('p1'), pageOf('p2'), { id: 'p1-out', type: 'helper' }, { id: 'p2-out', type: 'helper' }],
      { ...server.credentials, p1: { secret: 'first-secret' }, p2: { secret: 'second-secret' } },
    );
    const links: string[] = [];
    for (const id of ['p1', 'p2']) {
      const out = nextMessage(helper.getNode(`${id}-out`));
      helper.getNode(id).receive({ payload: sim.injectPendingError(), source: 'A', event: 'raised' });
      links.push(String((await out).answerUrl));
    }
    for (const link of links) assert.equal((await answerOnPage(link, 'Retry')).status, 200);
    assert.equal(puts().length, 2);
  });

  it('without a public URL passes the msg on without a link, saying why in the notification, and reaches no Catch', async function () {
    await load({ publicUrl: 'LH_NOT_SET_ANYWHERE', publicUrlType: 'env' });
    const caught = collect(helper.getNode('caught'));
    for (const title of ['Clot detected', 'Tip missing']) {
      const msg = await linkFor(sim.injectPendingError({ title }) as unknown as Msg, 'A');
      assert.equal(msg.answerUrl, undefined);
      assert.match(
        String(msg.notification),
        /^sim: Error Clot\n\(No answer link: the environment variable LH_NOT_SET_ANYWHERE is not set: .*Public URL of the answer page\. Answer in the Node-RED editor or on the instrument\.\)$/,
      );
    }
    assert.equal(caught.length, 0);
  });
});

describe('lh-answer-page links and escaping (pure)', function () {
  const dir = path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'lh-answer-page');
  const signing = require(path.join(dir, 'link-signing.js')) as {
    signLink(c: Msg, secret: string): string;
    verifyLink(t: unknown, secret: string, now: number): { ok: boolean; reason?: string };
  };
  const html = require(path.join(dir, 'page-html.js')) as { escapeHtml(v: unknown): string };

  it('accepts its own link until the expiry, and refuses another secret, altered claims and junk', function () {
    const claims = { i: 'abc', s: 'A', e: 'err-1', x: 2_000 };
    const token = signing.signLink(claims, 's1');
    assert.deepEqual(signing.verifyLink(token, 's1', 1_999), { ok: true, claims });
    assert.equal(signing.verifyLink(token, 's1', 2_000).reason, 'expired');
    assert.equal(signing.verifyLink(token, 's2', 1_000).reason, 'signature');
    const [, sig] = token.split('.');
    const altered = `${Buffer.from(JSON.stringify({ ...claims, x: 9e15 })).toString('base64url')}.${sig}`;
    assert.equal(signing.verifyLink(altered, 's1', 1_000).reason, 'signature');
    for (const junk of [undefined, '', 'a.b.c', 'x'.repeat(3000), '€.€'])
      assert.equal(signing.verifyLink(junk, 's1', 1_000).ok, false);
  });

  it('escapes every character that could start markup or leave an attribute', function () {
    assert.equal(
      html.escapeHtml(`<a href="x" onclick='y'>&\`=`),
      '&#60;a href&#61;&#34;x&#34; onclick&#61;&#39;y&#39;&#62;&#38;&#96;&#61;',
    );
  });
});
