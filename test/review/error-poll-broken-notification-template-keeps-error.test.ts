/**
 * Review finding (review67): lh-error-poll's Notification template with a typo (`{{title}` or a section left open, a
 * slip in the dialog) threw out of the rendering of each raised msg after the poll's memory had taken the error as
 * reported: the error msg never left the node, on any later poll either, and nothing said why (a log line "Unclosed
 * tag at 20" naming no setting). An error dropped. Now the msg goes out with the default notification and a line
 * saying the template was not used, and the refusal names the setting at Catch nodes (once per deploy).
 */
import assert from 'node:assert/strict';

import { bServerFlow, messageWhere, pollsDone } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: lh-error-poll with a broken notification template still sends every error', function () {
  this.timeout(30000);
  const sim = useInstrument();

  async function load(template: string): Promise<void> {
    const server = bServerFlow(sim);
    await loadFlow(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'both',
          interval: 0.5,
          template,
          wires: [['raised'], [], []],
        },
        { id: 'raised', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['poll'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  }

  const broken: { what: string; template: string; why: RegExp }[] = [
    { what: 'a tag not closed', template: '{{message}}\nLab: {{title}', why: /Unclosed tag at \d+/ },
    { what: 'a section left open', template: '{{#error}}{{title}}', why: /Unclosed section "error"/ },
    { what: 'a section closed that was never opened', template: '{{title}}{{/error}}', why: /Unopened section "error"/ },
  ];

  for (const c of broken) {
    it(`${c.what}: each error goes out with the default notification, the setting named at Catch once`, async function () {
      const a = sim.injectPendingError({ severity: 'Error', title: 'Tip pickup failed', message: 'no tip at A1' });
      const b = sim.injectInstrumentError({ severity: 'Fatal', title: 'Gripper collision' });
      await load(c.template);
      const raised = collect(helper.getNode('raised'));
      const caught = collect(helper.getNode('caught'));
      await messageWhere('raised', () => raised.length >= 2);
      await pollsDone(sim, 2, 'A');
      assert.equal(raised.length, 2, 'each error once');
      const msgA = raised.find((m) => m.source === 'A') as Msg;
      const msgB = raised.find((m) => m.source === 'B') as Msg;
      assert.equal(msgA.errorId, a.id);
      assert.equal(msgB.uuid, b.uuid);
      // the default notification, with a line saying why the node's own was not used
      assert.match(String(msgA.notification), /: Error Tip pickup failed\nno tip at A1\nResponses: /);
      assert.match(String(msgB.notification), /: Fatal Gripper collision\n/);
      for (const m of [msgA, msgB]) assert.match(String(m.notification), /Notification template .*not used/);
      assert.equal(caught.length, 1, 'the template refused once, not per error');
      const error = caught[0].error as Msg;
      assert.match(
        String(error.message),
        new RegExp(`template: this node's template setting \\(template\\) could not be read: ${c.why.source}`),
      );
      assert.doesNotMatch(String(error.message), /\n/);
      assert.deepEqual([(error.cause as Msg).kind, (error.cause as Msg).field], ['validation', 'template']);
      const about = caught[0].source === 'A' ? caught[0].errorId : caught[0].uuid;
      assert.ok(about === a.id || about === b.uuid, 'with the msg of the error it was used for');
    });
  }

  it('a template that parses is used as before, nothing at Catch', async function () {
    sim.injectPendingError({ severity: 'Error', title: 'Tip pickup failed' });
    await load('{{source}}|{{title}}');
    const raised = collect(helper.getNode('raised'));
    const caught = collect(helper.getNode('caught'));
    const msg = await messageWhere('raised', () => true);
    await pollsDone(sim, 1, 'A');
    assert.equal(msg.notification, 'A|Tip pickup failed');
    assert.equal(raised.length, 1);
    assert.equal(caught.length, 0);
  });
});
