/**
 * Review (review89): a msg.topic built from instrument text is an e-mail subject, a chat title, a console log line:
 * review87 made lh-error-poll's one line without control characters, but let through what shows a subject other than
 * the instrument wrote: a bidirectional override (U+202E: "Fatal Clot" shown with its end reversed, "tolC" read as
 * something else), invisible zero-width characters (U+200B, U+2060, U+FEFF) and a lone surrogate (no character at
 * all: a UTF-8 encoder writes garbage or fails). And two other topics carried instrument text as written, with line
 * breaks and escape sequences: lh-events' (the event code) and the audit output of lh-answer-page and lh-error-policy
 * (`outcome: <error id>`).
 *
 * Real Node-RED against the simulator for lh-error-poll and lh-events; the audit msg (built by a pure function the two
 * answering nodes share) directly. msg.payload keeps the instrument's text as written in every case.
 */
import assert from 'node:assert/strict';

import { answerAuditMsg } from '../../src/nodes/answering/answer-audit';
import { messageWhere } from '../nodes/lh-error-poll.support';
import { builtNode, useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

/** Line breaks, controls, bidi controls, zero-width characters that are no part of a script, lone surrogates. */
const NOT_SHOWN = /[\n\r\v\f\u0085\u2028\u2029\p{Cc}\p{Cs}\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/u;

const TITLES = [
  'Clot \u202edetected\u202c in B4',
  'Tip \u2066missing\u2069 \u200fon channel 3',
  'Liquid\u200b level\u2060 low\ufeff',
  'Door open \ud800 now',
  'Lid \udc00 stuck \u001b[2J',
];

describe('msg.topic from instrument text: no bidi override, zero-width character or lone surrogate', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('lh-error-poll: the raised topic shows the title as written, nothing hidden or reversed', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
    for (const title of TITLES) {
      const error = sim.injectPendingError({ title, severity: 'Error' });
      const up = await messageWhere('raised', (m) => (m.payload as Msg).id === error.id);
      const topic = String(up.topic);
      assert.ok(!NOT_SHOWN.test(topic), `topic of ${JSON.stringify(title)}: ${JSON.stringify(topic)}`);
      for (const word of title.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1))
        assert.ok(topic.includes(word), `topic keeps ${word}: ${JSON.stringify(topic)}`);
      assert.equal((up.payload as Msg).title, title, 'msg.payload keeps the title as the instrument gave it');
    }
    // an emoji joined by U+200D (and U+200C of a script) is text, not hidden: kept
    const joined = sim.injectPendingError({ title: 'Check 👩‍🔬 می‌خواهم', severity: 'Error' });
    const up = await messageWhere('raised', (m) => (m.payload as Msg).id === joined.id);
    assert.equal(up.topic, 'sim: Error Check 👩‍🔬 می‌خواهم');
  });

  it('lh-events: the topic of an event whose code has a line break or an escape is one line', async function () {
    const server = serverFlow(sim, { withB: false });
    await helper.load(
      [tlsConfigNode, builtNode('lh-server'), builtNode('lh-events')],
      [
        ...server.nodes,
        { id: 'ev', type: 'lh-events', server: 'server', codes: '', wires: [['out'], ['conn']] },
        { id: 'out', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      server.credentials,
    );
    const events = collect(helper.getNode('out'));
    const codes = ['door\nopen', 'run\u001b[2Jstatus', 'lid\u202estuck'];
    // published until the node is connected and every code arrives
    for (let i = 0; i < 50 && events.length < codes.length; i++) {
      events.length = 0;
      for (const code of codes) sim.publishEvent(code, 'x', {});
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(events.length, codes.length, 'every event sent');
    for (const msg of events) {
      const topic = String(msg.topic);
      assert.ok(!NOT_SHOWN.test(topic), `topic ${JSON.stringify(topic)}`);
    }
    assert.deepEqual(
      events.map((m) => (m.payload as Msg).code),
      codes.map((c) => c.toLowerCase()),
      'msg.payload.code as the instrument sent it (lower case, as every code)',
    );
  });

  it('lh-answer-page / lh-error-policy audit msg: the topic is one line whatever the error id', function () {
    for (const key of ['abc\nFORGED: answered', 'id\u001b[2J', 'x\u202edi', 'y\ud800']) {
      const msg = answerAuditMsg({
        source: 'A',
        errorKey: key,
        response: 'Retry',
        outcome: { outcome: 'not-pending', message: 'the error is no longer pending' },
        error: null,
        details: {},
      });
      assert.ok(!NOT_SHOWN.test(String(msg.topic)), `topic ${JSON.stringify(msg.topic)}`);
      assert.equal((msg.payload as Msg).errorKey, key, 'msg.payload.errorKey as the instrument gave it');
      assert.equal(msg.errorId, key);
    }
  });
});
