/**
 * Review (client: answer depth). The reads that watch the instrument keep an answer nested deeper than
 * MAX_ANSWER_DEPTH with the values that deep left out (cutDeeper) rather than refuse it. Property over drawn JSON
 * (objects and arrays mixed, wide and deep, a "__proto__" key; seeded: LH_SEED replays, LH_CASES draws more): after
 * the cut nothing nests deeper (nestsDeeper agrees), what nests less deep is kept as it was, each value cut is
 * TOO_DEEP in its place, no prototype changes, and an answer within the bound is not touched.
 */
import assert from 'node:assert/strict';

import { TOO_DEEP } from '../../src/client/event-frames';
import { cutDeeper, MAX_ANSWER_DEPTH, nestsDeeper } from '../../src/client/transport';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 40;

/** JSON text of a drawn value: a spine `depth` levels deep with drawn siblings along it. */
function drawn(rng: Rng, depth: number): string {
  let text = rng.below(2) === 0 ? '"leaf"' : '{}';
  for (let i = 0; i < depth; i++) {
    const sibling = rng.below(3) === 0 ? '[1,{"x":[]},null]' : '"s"';
    const key = rng.below(10) === 0 ? '__proto__' : `k${rng.below(5)}`;
    text = rng.below(2) === 0 ? `[${sibling},${text}]` : `{"a":${sibling},"${key}":${text}}`;
  }
  return text;
}

/** The depth of the deepest object or array (root 1), iteratively; TOO_DEEP texts counted where they stand. */
function depthAndCuts(value: unknown): { depth: number; cutAt: number[] } {
  let depth = 0;
  const cutAt: number[] = [];
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === TOO_DEEP) cutAt.push(d);
    if (typeof v !== 'object' || v === null) continue;
    depth = Math.max(depth, d + 1);
    for (const item of Object.values(v)) stack.push([item, d + 1]);
  }
  return { depth, cutAt };
}

describe('review: an answer cut at the depth bound (seeded)', function () {
  it(`leaves nothing deeper, keeps the rest, says what it cut (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const depth = rng.weighted({ shallow: 1, edge: 2, deep: 1 });
      const levels =
        depth === 'shallow'
          ? rng.int(0, 60)
          : depth === 'edge'
            ? rng.int(MAX_ANSWER_DEPTH - 2, MAX_ANSWER_DEPTH + 2)
            : rng.int(200, 20000);
      const text = drawn(rng, levels);
      const why = `seed ${SEED}, case ${c}, ${levels} levels`;
      const original = JSON.parse(text) as unknown;
      const deeper = nestsDeeper(original, MAX_ANSWER_DEPTH);
      const cut = cutDeeper(JSON.parse(text), MAX_ANSWER_DEPTH);
      assert.equal(nestsDeeper(cut, MAX_ANSWER_DEPTH), false, `${why}: nothing deeper after the cut`);
      const { depth: after, cutAt } = depthAndCuts(cut);
      assert.ok(after <= MAX_ANSWER_DEPTH, `${why}: ${after} levels after the cut`);
      if (!deeper) {
        assert.deepEqual(cut, original, `${why}: within the bound, untouched`);
        assert.equal(cutAt.length, 0, why);
      } else {
        assert.ok(cutAt.length > 0, `${why}: says what was left out`);
        for (const d of cutAt) assert.equal(d, MAX_ANSWER_DEPTH, `${why}: cut at the bound, not above it`);
      }
      if (typeof cut === 'object' && cut !== null) {
        assert.equal(Object.getPrototypeOf(cut), Array.isArray(cut) ? Array.prototype : Object.prototype, why);
      }
    }
  });
});
