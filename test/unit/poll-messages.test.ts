import assert from 'node:assert/strict';

import { errorInMsg } from '../../src/nodes/answering/error-in-msg';
import { raisedMessage, resolvedMessage } from '../../src/nodes/shared/error-messages';
import { errorView } from '../../src/nodes/shared/lab-publish';
import type { NodeMessage } from '../../src/nodes/shared/node-red';
import { errorKey, readInstrumentError, readPendingError } from '../../src/nodes/shared/poll-messages';
import { forgetSecrets, rememberSecrets } from '../../src/nodes/shared/redaction';

/** The one reader of a raised msg (lh-answer-page, lh-error-policy). */
const read = (msg: object): ReturnType<typeof errorInMsg> => errorInMsg(msg as NodeMessage);

const instrument = { name: 'bench 1', baseUrl: 'http://a', instrumentUrl: 'https://b' };
const pending = { id: 'e1', groupId: 'g1', title: 'Tip lost', severity: 'Error', errorResponses: [{ response: 'Retry' }] };
const unhandled = {
  uuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
  title: 'Collision',
  actions: [{ id: 1, description: 'Retry' }],
};

describe('the message contract of lh-error-poll', function () {
  it('a raised A error reads back as the same error, with its key and group', function () {
    const msg = raisedMessage('A', pending, instrument, '');
    assert.equal(msg.source === 'A' && msg.errorId, 'e1');
    assert.deepEqual(read(msg), { source: 'A', key: 'e1', record: pending });
  });

  it('a raised B error reads back as the same error, keyed by uuid', function () {
    const msg = raisedMessage('B', unhandled, instrument, '{{title}}');
    assert.equal(msg.notification, 'Collision');
    assert.deepEqual(read(msg), { source: 'B', key: unhandled.uuid, record: unhandled });
  });

  it('a resolved msg carries the same identity fields', function () {
    const msg = resolvedMessage('A', pending, instrument);
    assert.equal(msg.event, 'resolved');
    assert.equal(msg.topic, 'resolved: bench 1: Error Tip lost');
    assert.equal(read(msg)?.key, 'e1');
  });

  it('an instrument that echoes a secret into an error: the topic, notification and lab view leave it out, the payload is the record', function () {
    // review42: the package's own texts from an error go to people (e-mail, chat, an MQTT broker)
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXBhcnQtb25l';
    const echoed = {
      ...pending,
      title: 'Login refused for admin with password Sekr3t-pw',
      message: `Authorization: Bearer ${jwt}`,
    };
    rememberSecrets('poll-messages test', ['Sekr3t-pw']);
    try {
      for (const source of ['A', 'B'] as const) {
        const record = source === 'A' ? echoed : { ...unhandled, title: echoed.title, message: echoed.message };
        const raised = raisedMessage(source, record, instrument, '{{title}} / {{message}} / {{{error.message}}}');
        const resolved = resolvedMessage(source, record, instrument);
        for (const text of [raised.topic, raised.notification, resolved.topic]) {
          assert.ok(!text.includes('Sekr3t-pw') && !text.includes(jwt), `${source}: ${text}`);
        }
        assert.match(raised.notification, /password \*\*\*/);
        // the record as read: the error's identity, which the answering nodes match against the instrument's list
        assert.deepEqual(raised.payload, record);
        const view = errorView(source, record);
        assert.equal(view.title, 'Login refused for admin with password ***');
        assert.equal(view.titleClipped, true, "a title that is not the instrument's is marked");
        assert.equal(errorView(source, source === 'A' ? pending : unhandled).titleClipped, undefined);
      }
    } finally {
      forgetSecrets('poll-messages test');
    }
  });

  it('a hand-built msg is read by the payload shape', function () {
    assert.deepEqual(read({ payload: { id: 'x', errorResponses: [] } }), {
      source: 'A',
      key: 'x',
      record: { id: 'x', errorResponses: [] },
    });
    assert.equal(read({ payload: { uuid: 'u' } })?.source, 'B');
    assert.equal(read({ payload: { id: 7 } })?.key, '7', 'numeric ids as text, as the answer ledger keys them');
  });

  it('msg.source decides, and a msg without an error reads as undefined', function () {
    assert.equal(read({ source: 'A', payload: { uuid: 'u' } }), undefined);
    assert.equal(read({ source: 'B', payload: pending }), undefined);
    assert.equal(read({ payload: 'text' }), undefined);
    assert.equal(readPendingError({ id: 3, errorResponses: [] }), undefined, 'A ids are strings');
    assert.equal(readPendingError({ id: 'x' }), undefined, 'an A error lists its responses');
    assert.equal(readInstrumentError([]), undefined);
  });

  it('error keys: A by id, B by uuid, numbers as text', function () {
    assert.equal(errorKey('A', { id: 7 }), '7');
    assert.equal(errorKey('B', { uuid: 'u', id: 'x' }), 'u');
    assert.equal(errorKey('A', null), undefined);
  });
});

describe('review68: the raised msg copies any record without throwing', function () {
  const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
  const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 6;

  /** Values a record may hold where it came from no JSON (a context store) or nests deeper than a copy may recurse. */
  const ODD: [string, () => unknown][] = [
    ['nested 3,000 levels', () => nestedObjects(3000)],
    ['an array nested 3,000 levels', () => JSON.parse('['.repeat(3000) + ']'.repeat(3000)) as unknown],
    ['a Buffer', () => Buffer.from('abc')],
    ['a Date', () => new Date(0)],
    ['a function', () => () => 1],
    ['a cycle', () => cycle()],
    ['a getter that throws', () => throwingGetter()],
    ['a Map', () => new Map([[1, 2]])],
    [
      'a class with a method',
      () =>
        new (class Part {
          x = 1;
          m(): number {
            return this.x;
          }
        })(),
    ],
  ];

  function nestedObjects(depth: number): unknown {
    let value: unknown = { leaf: true };
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  }
  function cycle(): unknown {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    return a;
  }
  function throwingGetter(): unknown {
    const o = { ok: 1 };
    Object.defineProperty(o, 'bad', {
      enumerable: true,
      get: () => {
        throw new Error('no');
      },
    });
    return o;
  }

  it(`raised and resolved msgs keep the identity, whatever else the record holds (seed ${SEED})`, function () {
    let s = SEED;
    const draw = (n: number): number => ((s = (s * 48271) % 2_147_483_647), s % n);
    const picks = [0, 2, ...Array.from({ length: CASES }, () => draw(ODD.length))];
    for (const i of picks) {
      const [what, make] = ODD[i];
      const why = `seed ${SEED}, ${what}`;
      const record = { ...pending, details: make() };
      const msg = raisedMessage('A', record, instrument, '');
      assert.equal(msg.source === 'A' && msg.errorId, 'e1', why);
      assert.equal((msg.payload as { title?: unknown }).title, 'Tip lost', why);
      assert.notEqual((msg.payload as { details?: unknown }).details, record.details, `${why}: the msg's own copy`);
      assert.doesNotThrow(() => JSON.stringify(msg), why);
      const gone = resolvedMessage('A', record, instrument);
      assert.equal(gone.source === 'A' && gone.errorId, 'e1', why);
      const b = raisedMessage('B', { ...unhandled, details: make() }, instrument, '');
      assert.equal(b.source === 'B' && b.uuid, unhandled.uuid, why);
    }
    // a key "__proto__" (JSON.parse makes it an own property) stays one: the copy's prototype is never replaced
    const proto = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const copied = raisedMessage('A', { ...pending, details: proto }, instrument, '').payload as unknown as { details: object };
    assert.deepEqual(Object.keys(copied.details), ['__proto__', 'y']);
    assert.equal(Object.getPrototypeOf(copied.details), Object.prototype);
  });
});
