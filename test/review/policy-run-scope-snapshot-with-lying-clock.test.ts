/**
 * The error policy's run scope is restored from the node context at start (a restart of Node-RED, src/nodes/runs/
 * run-scope.ts). A snapshot written by an older release (no clock pair), or one whose clock pair or times lie (a file
 * edited or damaged: NaN, `1e300`, a time past the last date JavaScript can name), must neither throw (restore runs
 * in the context store's callback: a throw there left the policy without its pending errors, or took Node-RED down)
 * nor leave the scope with a start that is not a time or lies after now (a choice made now would not count for it).
 * Drawn snapshots; LH_SEED / LH_CASES replay or extend them.
 */
import assert from 'node:assert/strict';

import { RunScope } from '../../src/nodes/runs/run-scope';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;
const HOUR = 3600_000;

describe('review: a policy run scope snapshot with a clock pair that lies', function () {
  this.timeout(15000);

  it('a clock pair past the dates JavaScript can name does not throw', function () {
    const now = Date.parse('2026-11-30T15:00:00.000Z');
    const scope = new RunScope();
    const saved = { scope: 'hour:2026-11-30T14:00:00.000Z', ladders: [], clock: { steady: 1e300, wall: now } };
    assert.doesNotThrow(() => scope.restore(saved, { steady: now, wall: now }));
    assert.equal(scope.current(now).kind, 'hour');
  });

  it(`restores drawn snapshots without throwing, its start a time not after now (seed ${SEED}, ${CASES} cases)`, function () {
    console.log(`      lying-clock seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    const now = Date.parse('2026-11-30T15:00:00.000Z') + rng.below(HOUR);
    const odd = (): unknown =>
      rng.pick<unknown>([NaN, Infinity, -Infinity, 1e300, -1e300, 8.64e15 + 1, 8.64e15, -8.64e15, 0, now, now + 1e12, '1', null]);
    const time = (): unknown => (rng.below(2) === 0 ? odd() : now + rng.int(-48 * HOUR, 48 * HOUR));
    for (let c = 0; c < CASES; c++) {
      const clock = rng.below(4) === 0 ? undefined : { steady: time(), wall: time() };
      const scopeName = rng.pick([
        undefined,
        `hour:${new Date(Math.floor(now / HOUR) * HOUR).toISOString()}`,
        ...(clock && typeof clock.steady === 'number' && Math.abs(clock.steady) < 8.6e15
          ? [`hour:${new Date(Math.floor(clock.steady / HOUR) * HOUR).toISOString()}`]
          : []),
      ]);
      const saved = {
        ...(rng.below(2) === 0 ? { run: { key: 'P1|Run|2026-11-30T14:00:00Z', since: time() } } : {}),
        ...(rng.below(2) === 0 ? { lastRunEnd: time() } : {}),
        ...(scopeName ? { scope: scopeName } : {}),
        ladders: [['rule-clot', { next: 1, seen: [['e1', 1]] }]],
        ...(clock ? { clock } : {}),
      };
      const label = `case ${c}: ${JSON.stringify(saved, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}`;
      const scope = new RunScope();
      assert.doesNotThrow(() => scope.restore(saved, { steady: now, wall: now }), label);
      const info = scope.current(now);
      assert.ok(Number.isFinite(info.since) && info.since <= now, `${label}: since ${info.since}`);
      assert.doesNotThrow(() => scope.snapshot({ steady: now, wall: now }), label);
    }
  });
});
