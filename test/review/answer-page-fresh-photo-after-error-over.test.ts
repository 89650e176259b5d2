/**
 * The fresh photo of the answer page is a live view of the deck for whoever holds the link: the link is sent to every
 * inbox of a mailing list and to chat, and lasts 24 h by default (up to 90 days). The page itself offers the
 * *Take a fresh photo* button only while the error waits for an answer, but `&photo=fresh` was served for the link's
 * whole life: after the error was answered on the page, or cleared on the instrument, anyone with the link (a
 * forwarded mail, a chat history) could still watch the deck (plates, labels, people at the instrument) on demand.
 * Now a fresh photo is taken only while the error the link was made for is pending and unanswered; after that the
 * request gets no bytes and the camera is not asked. The photo taken when the error was raised stays until the
 * link expires (README), as before.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { imageType } from '../../src/client';
import { answerOnPage, fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { helper, nextMessage } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

function fetchBytes(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('review: the answer page’s fresh photo once the error is over', function () {
  this.timeout(20000);
  const { sim, pageNode } = usePageSuite();

  async function linked(): Promise<{ id: string; msg: Msg }> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage([...server.nodes, pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }], {
      ...server.credentials,
      page: { secret: 'test-secret-not-shown' },
    });
    const error = sim.injectPendingError({ title: 'Liquid level not detected', responses: ['Retry', 'Abort'] });
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised', notification: 'n' });
    return { id: error.id, msg: await out };
  }

  const cameraRequests = (): number => sim.requests.filter((r) => r.path.startsWith('/api/v1/camera/')).length;

  for (const over of ['answered on the page', 'cleared on the instrument'] as const) {
    it(`${over}: no fresh photo through the link, the camera not asked; the raised one still served`, async function () {
      const { id, msg } = await linked();
      const link = String(msg.answerUrl);
      const pending = await fetchBytes(`${link}&photo=fresh`);
      assert.equal(pending.status, 200, 'while the error waits, the fresh photo is served');
      assert.equal(imageType(pending.body), 'image/png');
      if (over === 'answered on the page') {
        const answered = await answerOnPage(link, 'Retry');
        assert.equal(answered.status, 200, answered.text);
      } else {
        sim.resolvePendingError(id);
        // page views share one read of the list per 2 s: once the page says the error is over, so does the photo
        await until(async () => !/Take a fresh photo/.test((await fetchText(link)).text), 'the page sees it cleared', 10_000);
      }
      const asked = cameraRequests();
      const fresh = await fetchBytes(`${link}&photo=fresh`);
      assert.notEqual(fresh.status, 200, 'no live view of the deck for a link whose error is over');
      assert.equal(imageType(fresh.body), undefined, 'no image bytes');
      assert.equal(cameraRequests(), asked, 'the camera is not asked');
      const page = await fetchText(link);
      assert.doesNotMatch(page.text, /Take a fresh photo/);
      const raised = await fetchBytes(String(msg.snapshotUrl));
      assert.equal(raised.status, 200, 'the photo of when the error was raised stays until the link expires');
    });
  }
});
