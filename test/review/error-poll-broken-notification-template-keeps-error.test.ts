/**
 * Review finding (review67): lh-error-poll's Notification template with a typo (`{{title}` or a section left open, a
 * slip in the dialog) threw out of the rendering of each raised msg after the poll's memory had taken the error as
 * reported: the error msg never left the node, on any later poll either, and nothing said why (a log line "Unclosed
 * tag at 20" naming no setting). An error dropped. Now the msg goes out with the default notification and a line
 * saying the template was not used, and the refusal names the setting at Catch nodes (once per deploy).
 */
import assert from 'node:assert/strict';

import { raisedMessage, templateView } from '../../src/nodes/shared/error-messages';
import type { InstrumentInfo } from '../../src/nodes/shared/error-records';
import type { PolledError } from '../../src/nodes/shared/poll-messages';
import { renderTemplate, templateProblem } from '../../src/nodes/shared/typed-inputs';
import { bServerFlow, messageWhere, pollsDone } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
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

describe('review: a raised msg is built whatever the notification template says (seeded property)', function () {
  const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
  const cases = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;
  const pieces = [
    '{{',
    '}}',
    '{{{',
    '}}}',
    '{{#',
    '{{^',
    '{{/',
    '{{!',
    '{{>',
    '{{=',
    '=}}',
    '{{&',
    'title',
    'error',
    'message',
    ' ',
    '\n',
    'x',
    '|',
    '.',
  ];

  it(`never throws; a template that parses renders as it always did (seed ${seed}, ${cases} templates)`, function () {
    const rng = new Rng(seed);
    const record = { id: 7, title: 'Clot detected', message: 'no tip', severity: 'Error', errorResponses: ['Retry'] };
    const instrument = { name: 'sim', key: 'k' } as unknown as InstrumentInfo;
    const view = templateView('A', record as unknown as PolledError, instrument);
    let broken = 0;
    for (let i = 0; i < cases; i++) {
      const template = Array.from({ length: rng.int(1, 12) }, () => rng.pick(pieces)).join('');
      const shown = `template ${JSON.stringify(template)} (LH_SEED=${seed})`;
      const msg = raisedMessage('A', record as unknown as PolledError, instrument, template);
      const problem = templateProblem(template, 'template', 'lh-error-poll');
      if (problem) {
        broken++;
        assert.match(String(msg.notification), /^sim: Error Clot detected\n/, shown);
        assert.match(String(msg.notification), /Notification template could not be read and was not used/, shown);
        assert.equal(problem.field, 'template', shown);
      } else {
        assert.equal(msg.notification, renderTemplate(template, view), shown);
      }
      assert.equal((msg as unknown as Record<string, unknown>).errorId, 7, shown);
    }
    assert.ok(broken > 0 && broken < cases, `both kinds drawn: ${broken} of ${cases} broken`);
  });
});
