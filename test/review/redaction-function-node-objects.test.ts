/**
 * Review finding: the one redaction step that guards every text leaving a node (msg.error, logs, audit records) did
 * not walk an object made in a function node: its code runs in a sandbox (another realm) whose `{}` has an
 * Object.prototype of its own, and the walk took any object whose prototype was not this realm's Object.prototype
 * for a class instance and returned it as it was. A configured secret in a field of a step or setting body built in a
 * function node, or in a secret-named field of it, reached the audit record unredacted. Now an object of any realm is
 * walked. Property (fast-check, the seed printed; LH_SEED=<n> replays it): a value made in another realm (node:vm)
 * is redacted as the same value made in this realm.
 */
import assert from 'node:assert/strict';
import vm from 'node:vm';

import fc from 'fast-check';

import { redactValue } from '../../src/contract/redaction';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const SECRET = 'hunter2-Secret';

describe('review: redaction of objects made in a function node (another realm)', function () {
  it('redacts them as the same objects made in this realm', function () {
    console.log(`      redaction-realm seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const key = fc.constantFrom('note', 'password', 'token', 'wells', 'apiKey', 'level');
    const text = fc.constantFrom('plain', SECRET, `the password is ${SECRET}`, 'A1:H12');
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, text, fc.integer(), tie('object'), tie('array')),
      object: fc.dictionary(key, tie('tree'), { maxKeys: 4 }),
      array: fc.array(tie('tree'), { maxLength: 3 }),
    }));
    fc.assert(
      fc.property(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 4 }), (value) => {
        const json = JSON.stringify(value);
        const foreign: unknown = vm.runInNewContext(`(${json})`);
        assert.equal(JSON.stringify(redactValue(foreign, [SECRET])), JSON.stringify(redactValue(JSON.parse(json), [SECRET])));
        assert.ok(!JSON.stringify(redactValue(foreign, [SECRET])).includes(SECRET));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
