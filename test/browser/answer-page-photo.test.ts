// Issue 33 in a real Chromium on a phone-sized screen: the answer page shows the deck photo taken when the error was
// raised, the fresh-photo button shows a new one, and an expired link shows no photo at all.
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { usePhonePage } from '../support/browser';
import { helper, nextMessage } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-output', 'screenshots');

describe('answer page in Chromium: the deck photo', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite();
  const phone = usePhonePage();

  async function load(expiryHours: number): Promise<void> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage([...server.nodes, pageNode({ expiryHours, wires: [['linked'], []] }), { id: 'linked', type: 'helper' }], {
      ...server.credentials,
      page: { secret: 'browser-secret' },
    });
  }

  async function linked(): Promise<Msg> {
    const error = sim.injectPendingError({ title: 'Liquid level not detected', message: 'channel 3, plate P2 well B4' });
    const out = nextMessage(helper.getNode('linked'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised' });
    return out;
  }

  /** Each image of the page: loaded (its bytes decoded) and its width on the screen. */
  function images(): Promise<{ alt: string; loaded: boolean; width: number }[]> {
    return phone.page
      .locator('img')
      .evaluateAll((imgs) =>
        (imgs as HTMLImageElement[]).map((i) => ({ alt: i.alt, loaded: i.complete && i.naturalWidth > 0, width: i.width })),
      );
  }

  it('shows the photo of the error full width on a phone, and the answer buttons below it', async function () {
    await load(1);
    const msg = await linked();
    await phone.page.goto(String(msg.answerUrl));
    const shown = await images();
    assert.equal(shown.length, 1);
    assert.equal(shown[0].alt, 'The deck when the error was raised');
    assert.ok(shown[0].loaded, 'the photo did not load');
    assert.ok(shown[0].width > 300 && shown[0].width <= 390, `photo width ${shown[0].width}`);
    assert.deepEqual(await phone.page.locator('button').allInnerTexts(), ['Retry', 'Abort', 'Ignore']);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await phone.page.screenshot({ path: path.join(SCREENSHOTS, 'answer-page-photo.png'), fullPage: true });
  });

  it('the fresh-photo button shows the deck now beside the photo of the error, through the same link', async function () {
    await load(1);
    const msg = await linked();
    await phone.page.goto(String(msg.answerUrl));
    await phone.page.click('a:has-text("Take a fresh photo of the deck")');
    await phone.page.waitForSelector('img[alt="The deck now"]');
    const shown = await images();
    assert.deepEqual(
      shown.map((i) => [i.alt, i.loaded]),
      [
        ['The deck when the error was raised', true],
        ['The deck now', true],
      ],
    );
    assert.ok(phone.page.url().startsWith(String(msg.answerUrl)), phone.page.url());
    assert.deepEqual(await phone.page.locator('button').allInnerTexts(), ['Retry', 'Abort', 'Ignore'], 'still answerable');
    await phone.page.screenshot({ path: path.join(SCREENSHOTS, 'answer-page-fresh-photo.png'), fullPage: true });
  });

  it('an expired link shows the plain 403 page and no photo; the photo URL gives none either', async function () {
    await load(0.0002); // 0.72 s
    const msg = await linked();
    await until(async () => (await fetchText(String(msg.answerUrl))).status === 403, 'the link expired', 10_000);
    const res = await phone.page.goto(String(msg.answerUrl));
    assert.equal(res?.status(), 403);
    assert.equal((await images()).length, 0);
    const photo = await phone.page.goto(String(msg.snapshotUrl));
    assert.equal(photo?.status(), 403);
    assert.match(String(photo?.headers()['content-type']), /^text\/html/);
    await phone.page.goto(String(msg.answerUrl));
    await phone.page.screenshot({ path: path.join(SCREENSHOTS, 'answer-page-photo-expired.png'), fullPage: true });
  });
});
