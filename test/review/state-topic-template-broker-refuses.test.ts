/**
 * Review finding (lh-state's topic templates): the dialog refuses a State topic or Event topics with `+` or `#` or
 * over 200 characters, but the runtime took any template a flow held (a hand-written flows.json, one posted to the
 * admin API, an older export): `lab/#/{{instrument}}` made documents the core mqtt out node drops with a warning of
 * its own, and a control character (`lab/\u0085{{instrument}}`, a NEL pasted from a Windows-1252 text) made a topic
 * mosquitto takes as malformed: it drops the mqtt out node's connection, every other instrument's msgs on it with
 * it, and no retained document ever arrives. lh-state now refuses such a template when it starts, with an error
 * naming the field and the rule (its status too), and sends nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';

import { topicTemplateOk } from '../../src/observe/state-document';
import { editorDefinition } from '../support/editor-definition';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const CATALOGUE = path.resolve(__dirname, '..', '..', 'src', 'nodes', 'lh-state', 'locales', 'en-US', 'lh-state.json');
const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);

/** What a topic may not hold (MQTT 3.1.1 §1.5.3, mosquitto; the wildcards), outside the name put in. */
function refused(c: string): boolean {
  const cp = c.codePointAt(0) ?? 0;
  return (
    c === '+' ||
    c === '#' ||
    cp <= 0x1f ||
    (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    (cp >= 0xfdd0 && cp <= 0xfdef) ||
    (cp & 0xfffe) === 0xfffe
  );
}

describe('review: a topic template a broker refuses, from a hand-written flow', function () {
  this.timeout(30000);

  it('property: a template is taken when it is at most 200 characters without a wildcard or a refused character', function () {
    console.log(`      seed ${seed} (LH_SEED to replay)`);
    const part = fc.oneof(
      fc.constantFrom('lab', '/', '{{instrument}}', 'state', 'é', '\u{1f9ea}', ' ', '-'),
      fc.constantFrom('+', '#', '\0', '\u0001', '\u0085', '\u007f', '\ud800', '\uffff', '\ufdd0'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 80 }), (parts) => {
        const template = parts.join('');
        const outside = template.split('{{instrument}}').join('');
        const expected = template.length <= 200 && ![...outside].some(refused);
        assert.equal(topicTemplateOk(template), expected, JSON.stringify(template));
        // the dialog marks what the runtime refuses, and takes what it takes
        for (const field of ['topic', 'eventTopic'])
          assert.equal(
            editorDefinition('lh-state').defaults[field]?.validate?.call({}, template) === true,
            expected || template === '',
          );
      }),
      { seed, numRuns: 500 },
    );
  });

  describe('in Node-RED', function () {
    const sim = useInstrument();
    for (const [field, value] of [
      ['topic', 'lab/\u0085{{instrument}}/state'],
      ['topic', 'lab/#/{{instrument}}'],
      ['eventTopic', `lab/${'x'.repeat(300)}/{{instrument}}`],
    ] as const) {
      it(`${field} ${JSON.stringify(value).slice(0, 40)}: refused at deploy naming the field and the rule, nothing sent`, async function () {
        const server = serverFlow(sim, { withB: false });
        const sent: Msg[] = [];
        await helper.load(
          [...packageNodes(), tlsConfigNode],
          [
            ...server.nodes,
            { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
            { id: 'state', type: 'lh-state', server: 'server', machineInterval: '0', [field]: value, wires: [['out'], ['out']] },
            { id: 'out', type: 'helper' },
          ],
          server.credentials,
        );
        helper.getNode('out').on('input', (msg: Msg) => sent.push(msg));
        const said = (): string[] =>
          (helper.log().args as unknown[][])
            .map((a) => JSON.stringify(a))
            .filter((line) => line.includes(`${field} \\"`) && /without \+ or #|lh-state\.errors\.topic/.test(line));
        // the test runtime logs the rule's key; its text, as a user's Node-RED logs it:
        await until(() => said().length > 0, `an error naming ${field} and the rule`, 10_000);
        const catalogue = JSON.parse(fs.readFileSync(CATALOGUE, 'utf8')) as { 'lh-state': { errors: { topic: string } } };
        assert.match(catalogue['lh-state'].errors.topic, /at most 200 characters without \+ or # or a control character/);
        helper.getNode('state').receive({ payload: 'send the document' });
        await new Promise((resolve) => setTimeout(resolve, 3000)); // the first poll and the resend 2 s after the deploy
        assert.deepEqual(
          sent.map((m) => m.topic),
          [],
          'no document or event with a topic the broker refuses',
        );
      });
    }
  });
});
