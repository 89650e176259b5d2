/** ddmin (pure): it finds the smallest failing sublist when the failure needs a set of items, within a budget of runs. */
import assert from 'assert';

import fc from 'fast-check';

import { ddmin } from './shrink';

describe('chaos shrinking (ddmin)', function () {
  it('a failure that needs exactly the items K: ddmin returns K, and never asks about one sublist twice', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 99 }), { minLength: 1, maxLength: 24 }).chain((items) =>
          fc.tuple(
            fc.constant(items),
            fc
              .array(fc.nat(items.length - 1), { minLength: 1, maxLength: 3 })
              .map((picks) => [...new Set(picks.map((p) => items[p]))]),
          ),
        ),
        async ([items, needed]) => {
          const asked = new Set<string>();
          const { result } = await ddmin(items, async (subset) => {
            const key = subset.join(',');
            assert.ok(!asked.has(key), `asked twice about [${key}]`);
            asked.add(key);
            return needed.every((x) => subset.includes(x));
          });
          assert.deepStrictEqual(
            [...result].sort((a, b) => a - b),
            [...needed].sort((a, b) => a - b),
          );
        },
      ),
    );
  });

  it('a failure with no fault at all shrinks to the empty list', async function () {
    const { result } = await ddmin([1, 2, 3, 4], async () => true);
    assert.deepStrictEqual(result, []);
  });

  it('the budget caps the runs; what it returns still fails', async function () {
    const fails = async (subset: number[]): Promise<boolean> => subset.includes(7) && subset.includes(13);
    const items = Array.from({ length: 40 }, (_, i) => i);
    const { result, runs } = await ddmin(items, fails, 5);
    assert.ok(runs <= 5, `${runs} runs`);
    assert.ok(await fails(result));
  });
});
