/**
 * Review finding (review40's depth cap before Catch): the cap walked arrays and plain objects only, but Node-RED's copy
 * of a failed msg for Catch nodes (lodash's cloneDeep) also goes into Maps, Sets, class instances and symbol-keyed
 * properties: a msg holding one of those nested 10,000 deep still overflowed the stack when the node failed, and
 * Node-RED exited. And a property that cannot be read through (a getter that throws, a revoked Proxy: a function
 * node's) made the cap itself throw inside the failure path, so the error reached neither Catch nor the log, and the
 * rejection was unhandled. Checked here with Node-RED's own copy (RED.util.cloneMessage).
 */
import assert from 'node:assert/strict';

import { cutTooDeep, MAX_MSG_DEPTH, nestsDeeper } from '../../src/nodes/shared/msg-depth';

const { cloneMessage } = (require('@node-red/util') as { util: { cloneMessage: (m: unknown) => unknown } }).util;

class Link {
  constructor(readonly next: unknown) {}
}

const KINDS: Record<string, (inner: unknown) => unknown> = {
  array: (d) => [d],
  'plain object': (d) => ({ a: d }),
  Map: (d) => new Map([['k', d]]),
  Set: (d) => new Set([d]),
  'class instance': (d) => new Link(d),
  'symbol key': (d) => ({ [Symbol('s')]: d }),
  mixed: (d) => new Map([['k', [new Set([{ a: new Link(d) }])]]]),
};

function chain(kind: (inner: unknown) => unknown, levels: number): unknown {
  let d: unknown = 1;
  for (let i = 0; i < levels; i++) d = kind(d);
  return d;
}

describe('review: the depth cap before Catch covers every kind Node-RED copies, and never throws', function () {
  for (const [name, kind] of Object.entries(KINDS)) {
    it(`a ${name} chain 10,000 deep is left out, and Node-RED can copy the msg; a shallow one stays`, function () {
      const msg: Record<string, unknown> = { payload: chain(kind, 10_000), topic: 't', shallow: chain(kind, 50) };
      cutTooDeep(msg);
      assert.equal(typeof msg.payload, 'string', `${name}: msg.payload was left as it is`);
      assert.match(String(msg.payload), new RegExp(`msg\\.payload nests deeper than ${MAX_MSG_DEPTH} levels`));
      assert.notEqual(typeof msg.shallow, 'string', `${name}: a value 50 deep was cut`);
      assert.doesNotThrow(() => cloneMessage(msg), `${name}: Node-RED's copy for Catch still throws`);
    });
  }

  it('the depth counted for a Map, a Set or a class instance is the copy depth (each level one)', function () {
    for (const [name, kind] of Object.entries(KINDS)) {
      if (name === 'mixed') continue;
      for (const levels of [0, 1, 5, 12]) {
        const value = chain(kind, levels);
        for (const limit of [0, 1, 4, 5, 6, 12, 13]) {
          assert.equal(nestsDeeper(value, limit), levels > limit, `${name}: ${levels} levels, limit ${limit}`);
        }
      }
    }
  });

  it('a getter that throws or a revoked Proxy is left out: the cap does not throw, the copy works', function () {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const msg: Record<string, unknown> = {
      payload: {
        get x(): unknown {
          throw new Error('boom');
        },
      },
      proxy: revoked.proxy,
      deeper: [{ inner: revoked.proxy }],
      topic: 'kept',
    };
    Object.defineProperty(msg, 'own', {
      get: () => {
        throw new Error('own getter');
      },
      enumerable: true,
      configurable: true,
    });
    assert.doesNotThrow(() => cutTooDeep(msg));
    for (const key of ['payload', 'proxy', 'deeper', 'own']) {
      assert.match(String(msg[key]), new RegExp(`msg\\.${key} cannot be read through`), key);
    }
    assert.equal(msg.topic, 'kept');
    assert.doesNotThrow(() => cloneMessage(msg));
  });

  it('a Buffer, a typed array and a Date are copied whole (not walked), a Map of 100,000 entries quickly', function () {
    const big = new Map<number, unknown>();
    for (let i = 0; i < 100_000; i++) big.set(i, { i });
    const msg: Record<string, unknown> = { payload: Buffer.alloc(1_000_000), t: new Float64Array(100_000), d: new Date(), big };
    const started = process.hrtime.bigint();
    cutTooDeep(msg);
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2000, 'slow');
    assert.ok(Buffer.isBuffer(msg.payload) && msg.t instanceof Float64Array && msg.d instanceof Date && msg.big === big);
  });
});
