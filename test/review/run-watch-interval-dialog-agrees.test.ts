/**
 * Hostile review (first hour, every dialog): lh-run-watch's *Poll every* was checked for its lower bound only, and
 * the node clamps the interval to 24 h (intervalMs): a dialog value of 100000 s saved clean and the node then polled
 * every 86400 s, without a word. The dialog now checks both bounds, as lh-error-poll's does (README: the poll interval
 * is 0.5 s to 24 h): what it accepts is polled as written (empty: the node's default).
 */
import assert from 'node:assert/strict';

import { DEFAULT_INTERVAL_MS, intervalMs } from '../../src/nodes/shared/poll-loop';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

describe('review: lh-run-watch Poll every, the dialog accepts what the node polls as written', function () {
  it('seeded values: accepted exactly when the node polls at that interval (empty: the default)', function () {
    const validate = editorDefinition('lh-run-watch').defaults.interval.validate as Check;
    const node = { type: 'lh-run-watch', _: (k: string) => k };
    const seed = Number(process.env.LH_SEED ?? 5859);
    const rng = new Rng(seed);
    const values = ['0.4', '0.5', '1', '5', '86400', '86400.5', '86401', '100000', '1e3'];
    for (let i = 0; i < 200; i++) values.push(String(rng.int(0, 200_000) / (rng.int(0, 1) === 0 ? 1 : 10)));
    for (const v of values) {
      const asWritten = /^\d+(\.\d+)?$/.test(v) && intervalMs(v) === Math.round(Number(v) * 1000);
      assert.equal(validate.call(node, v) === true, asWritten, `seed ${seed}: ${v} s`);
    }
    assert.equal(validate.call(node, ''), true);
    assert.equal(intervalMs(''), DEFAULT_INTERVAL_MS);
    assert.equal(validate.call(node, '100000', {}), 'lh-run-watch.errors.interval');
  });
});
