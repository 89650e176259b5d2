/**
 * README "Security": "a POST needs a one-time form token that only the page itself shows, so a foreign page can
 * neither read a form nor answer with one." A foreign page cannot read a form, but whoever can open the link (a
 * colleague in the chat channel the notification went to) can take a form token and the page's signed state, and put
 * them in a form on a web site of theirs: a person who presses its button posts it from their own browser, which
 * sends its own cookies and cached HTTP Basic credentials (httpNodeAuth) along. The page took that post: the answer
 * went to the instrument chosen by someone else, recorded in the audit trail as given by the person who pressed.
 * The page's own forms post from the page (`Sec-Fetch-Site: same-origin`); a post a browser says comes from another
 * site is now refused and sends nothing. Real Chromium: the foreign page on another origin, a person pressing its
 * button.
 */
import assert from 'node:assert/strict';
import http from 'http';

import type { AddressInfo } from 'net';

import { answerOnPage, fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { usePhonePage } from '../support/browser';
import { helper, nextMessage } from '../support/runtime';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

describe('review: an answer form posted from another web site', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite();
  const phone = usePhonePage();
  let foreign: http.Server | undefined;
  let foreignHtml = '';

  before(async function () {
    foreign = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(foreignHtml);
    });
    await new Promise<void>((resolve) => foreign?.listen(0, '127.0.0.1', () => resolve()));
  });
  after(async function () {
    await new Promise<void>((resolve) => (foreign ? foreign.close(() => resolve()) : resolve()));
  });

  beforeEach(async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        pageNode({ wires: [['linked'], ['audit']] }),
        { id: 'linked', type: 'helper' },
        { id: 'audit', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'foreign-form-secret' } },
    );
  });

  async function linkFor(title: string): Promise<string> {
    const out = nextMessage(helper.getNode('linked'));
    helper.getNode('page').receive({
      payload: sim.injectPendingError({ title, responses: ['Retry', 'Abort'] }),
      source: 'A',
      event: 'raised',
    });
    return String((await out).answerUrl);
  }

  it("a person pressing a foreign page's button with a real form of the page: refused, nothing sent", async function () {
    const link = await linkFor('Clot detected');
    // someone who can open the link takes a form (the page's own GET) and builds a web site around it
    const taken = formOf((await fetchText(link)).text);
    const abort = taken.buttons.find((b) => b.label.startsWith('Abort'));
    assert.ok(abort);
    const action = link.split('?')[0].replace('127.0.0.1', 'localhost'); // another site than the foreign page's
    const hidden = (name: string, value: string): string => `<input type="hidden" name="${name}" value="${escapeAttr(value)}">`;
    foreignHtml =
      `<!DOCTYPE html><html><body><form method="post" action="${escapeAttr(action)}">` +
      `${hidden('t', taken.t)}${hidden('form', taken.form)}${hidden('o', taken.o)}` +
      `<button type="submit" name="${abort.name}" value="${escapeAttr(abort.value)}">See the lab's new schedule</button>` +
      '</form></body></html>';
    const port = (foreign?.address() as AddressInfo).port;
    await phone.page.goto(`http://127.0.0.1:${port}/schedule`);
    await Promise.all([phone.page.waitForNavigation(), phone.page.click('button')]);
    const shown = await phone.page.content();
    assert.equal(answersSent(sim).length, 0, `the foreign page's post answered the error:\n${shown.slice(0, 800)}`);
    assert.match(shown, /Nothing was sent/);

    // the person who opens the link answers on the page itself, as always
    const audit = nextMessage(helper.getNode('audit'));
    await phone.page.goto(link.replace('127.0.0.1', 'localhost'));
    await Promise.all([phone.page.waitForNavigation(), phone.page.click('button:has-text("Retry")')]);
    assert.match(await phone.page.content(), /Answered/);
    assert.deepEqual(
      answersSent<Msg>(sim).map((a) => a.selectedResponse),
      ['Retry'],
    );
    assert.equal(((await audit).payload as Msg).outcome, 'answered');
  });

  it('a post from no browser page (curl, a script with the form) is still taken', async function () {
    const link = await linkFor('Door open');
    const res = await answerOnPage(link, 'Retry');
    assert.equal(res.status, 200, res.text.slice(0, 400));
    assert.equal(answersSent(sim).length, 1);
  });
});
