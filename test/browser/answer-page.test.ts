// The answer page in a real Chromium, as a person on a phone uses it: open the link, see the buttons, answer, see
// the outcome; open it again; and what previews, forgers and script-carrying error texts get.
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { usePhonePage } from '../support/browser';
import { helper, nextMessage } from '../support/runtime';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;

describe('answer page in Chromium', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite();
  const phone = usePhonePage();
  const dialogs: string[] = [];
  beforeEach(async function () {
    phone.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        pageNode({ expiryHours: 1, wires: [['linked'], ['audit']] }),
        { id: 'linked', type: 'helper' },
        { id: 'audit', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'browser-secret' } },
    );
  });

  const puts = (): Msg[] => answersSent<Msg>(sim);

  async function linkFor(record: unknown): Promise<string> {
    const out = nextMessage(helper.getNode('linked'));
    helper.getNode('page').receive({ payload: record, source: 'A', event: 'raised' });
    return String((await out).answerUrl);
  }

  it('opens the link, shows one button per response, answers once and says so; the link then shows who answered', async function () {
    const error = sim.injectPendingError({
      title: 'Clot detected',
      message: 'Channel 2 detected a clot in B4.',
      responses: ['Retry', 'Abort', 'Ignore'],
    });
    const link = await linkFor(error);
    await phone.page.goto(link);
    assert.equal(await phone.page.locator('h1').innerText(), 'Warning: Clot detected');
    assert.deepEqual(await phone.page.locator('button').allInnerTexts(), ['Retry', 'Abort', 'Ignore']);
    const width = await phone.page.locator('button').first().boundingBox();
    assert.ok(width && width.width > 300, 'buttons are not full width on a phone');
    assert.equal(puts().length, 0);

    await phone.page.fill('#by', 'Robin');
    await phone.page.click('button:has-text("Ignore")');
    await phone.page.waitForSelector('.outcome');
    assert.match(
      await phone.page.locator('.outcome').innerText(),
      /^Answered with Ignore by Robin at .*\. The instrument accepted it\.$/,
    );
    assert.equal(puts().length, 1);
    assert.equal(puts()[0].selectedResponse, 'Ignore');

    await phone.page.goto(link);
    assert.match(
      await phone.page.locator('.outcome').innerText(),
      /^Already answered with Ignore by Robin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/,
    );
    assert.equal(await phone.page.locator('button').count(), 0);
    // the browser's back button and a resubmitted form change nothing either
    await phone.page.goBack();
    assert.equal(puts().length, 1);
  });

  it('a link preview (plain GET with a bot user agent) changes nothing', async function () {
    const error = sim.injectPendingError();
    const link = await linkFor(error);
    for (const agent of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'Mozilla/5.0 (compatible; Microsoft Office/16.0; SkypeUriPreview Preview/0.5)',
    ]) {
      const preview = await fetchText(link, { headers: { 'User-Agent': agent } });
      assert.equal(preview.status, 200);
    }
    assert.equal(puts().length, 0);
    assert.ok(sim.state.pendingErrors.some((e) => e.id === error.id));
  });

  it('forged and expired links get a plain 403 page', async function () {
    const link = await linkFor(sim.injectPendingError());
    const forged = link.replace(/\.[A-Za-z0-9_-]{4}/, '.AAAA');
    const res = await phone.page.goto(forged);
    assert.equal(res?.status(), 403);
    assert.equal(await phone.page.locator('h1').innerText(), 'This link is not valid');
    assert.equal(await phone.page.locator('button').count(), 0);

    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() + 3600_000 + 1000 });
    try {
      const expired = await phone.page.goto(link);
      assert.equal(expired?.status(), 403);
    } finally {
      clock.uninstall();
    }
  });

  it('a POST without the form token is refused and sends nothing', async function () {
    const link = await linkFor(sim.injectPendingError());
    await phone.context.close();
    phone.context = await phone.browser.newContext(); // with JavaScript in the test's hand, to strip the token field before submitting
    phone.page = await phone.context.newPage();
    await phone.page.goto(link);
    await phone.page.locator('input[name="form"]').evaluate((el) => el.remove());
    await phone.page.click('button:has-text("Retry")');
    await phone.page.waitForSelector('.outcome');
    assert.match(await phone.page.locator('.outcome').innerText(), /already used or has expired\. Nothing was sent/);
    assert.equal(puts().length, 0);
  });

  it("keeps the page's text inert: an error titled <script> stays text", async function () {
    const title = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const link = await linkFor(
      sim.injectPendingError({ title, message: '<a href="http://evil.example">click</a>', responses: ['<b>Retry</b>'] }),
    );
    await phone.context.close();
    phone.context = await phone.browser.newContext(); // JavaScript on: any injected script would run
    phone.page = await phone.context.newPage();
    phone.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await phone.page.goto(link);
    assert.equal(await phone.page.locator('h1').innerText(), `Warning: ${title}`);
    assert.equal(await phone.page.locator('script').count(), 0);
    // the page's own deck photo and fresh-photo link (issue 33) aside, no image and no link: the error's markup stays text
    assert.equal(await phone.page.locator('img:not([src^="?t="])').count(), 0);
    assert.equal(await phone.page.locator('a:not(.button)').count(), 0);
    assert.equal(await phone.page.locator('a.button').getAttribute('href'), `?t=${link.split('?t=')[1]}&view=fresh`);
    assert.deepEqual(await phone.page.locator('button').allInnerTexts(), ['<b>Retry</b>']);
    await phone.page.click('button');
    await phone.page.waitForSelector('.outcome');
    assert.match(await phone.page.locator('.outcome').innerText(), /Answered with <b>Retry<\/b>/);
    assert.equal(puts()[0].selectedResponse, '<b>Retry</b>');
    assert.deepEqual(dialogs, []);
  });
});
