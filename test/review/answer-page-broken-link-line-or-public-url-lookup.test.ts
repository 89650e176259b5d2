/**
 * Review finding (review67, left by review66): lh-answer-page's two settings read against the msg failed unlabelled.
 * A *Link line* template with a typo (`Answer: {{answerUrl}`) threw after the link was made: the msg went on with
 * msg.answerUrl set and a notification saying "(No answer link: Unclosed tag at 20 …)", a false statement naming no
 * setting, and nothing reached Catch. A *Public URL* looked up in global context under a path the msg cannot fill in
 * (`urls[msg.lab.name]` for a msg without msg.lab) gave "(No answer link: Invalid expression started at position 5 …)",
 * naming no setting either.
 *
 * Now a Link line that cannot be read gives the default line (`Answer: <link>`) and its refusal, naming linkText, reaches
 * Catch nodes once per deploy; a Public URL whose lookup fails says so naming publicUrl, as a missing one does (the msg
 * goes on, no link, the reason in the notification and the log). The msg of the error is never lost.
 */
import assert from 'node:assert/strict';

import { loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { collect, helper, nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: lh-answer-page link line template and public URL lookup that fail', function () {
  this.timeout(20000);
  const { sim, web, pageNode } = usePageSuite();

  async function load(page: Msg): Promise<void> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        pageNode({ path: '/lh-answer-broken', wires: [['out'], []], ...page }),
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['page'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    );
  }

  async function linkFor(title: string): Promise<Msg> {
    const out = nextMessage(helper.getNode('out'));
    const record = sim.injectPendingError({ title }) as unknown as Msg;
    helper.getNode('page').receive({ payload: record, source: 'A', event: 'raised', notification: 'sim: Error Clot' });
    return out;
  }

  const templates: { what: string; linkText: string; why: RegExp }[] = [
    { what: 'a tag not closed', linkText: 'Answer: {{answerUrl}', why: /Unclosed tag at 20/ },
    { what: 'a section left open', linkText: '{{#answerUrl}}Answer: {{answerUrl}}', why: /Unclosed section "answerUrl"/ },
  ];

  for (const c of templates) {
    it(`a Link line with ${c.what}: the link goes out with the default line, linkText named at Catch once`, async function () {
      await load({ linkText: c.linkText });
      const caught = collect(helper.getNode('caught'));
      for (const title of ['Clot detected', 'Tip missing']) {
        const msg = await linkFor(title);
        const url = String(msg.answerUrl);
        assert.match(url, new RegExp(`^${web.url}/lh-answer-broken\\?t=`));
        assert.equal(msg.notification, `sim: Error Clot\nAnswer: ${url}`);
      }
      assert.equal(caught.length, 1, 'once per deploy, not per error');
      const error = caught[0].error as Msg;
      assert.match(
        String(error.message),
        new RegExp(`linkText: this node's linkText setting \\(template\\) could not be read: ${c.why.source}`),
      );
      assert.deepEqual([(error.cause as Msg).kind, (error.cause as Msg).field], ['validation', 'linkText']);
      assert.ok(String(caught[0].answerUrl).startsWith(web.url), 'with the msg of the error');
    });
  }

  for (const type of ['global']) {
    it(`a Public URL looked up in ${type} under a path the msg cannot fill: no link, the reason names publicUrl`, async function () {
      await load({ publicUrl: 'urls[msg.lab.name]', publicUrlType: type });
      const caught = collect(helper.getNode('caught'));
      const msg = await linkFor('Clot detected');
      assert.equal(msg.answerUrl, undefined);
      assert.match(
        String(msg.notification),
        new RegExp(
          `^sim: Error Clot\\n\\(No answer link: publicUrl: this node's publicUrl setting \\(${type}\\) could not be read: ` +
            'Invalid expression started at position 5[^\\n]*\\. Answer in the Node-RED editor or on the instrument\\.\\)$',
        ),
      );
      assert.equal(caught.length, 0, 'as a missing public URL: a notification without a link, no failure');
    });
  }
});
