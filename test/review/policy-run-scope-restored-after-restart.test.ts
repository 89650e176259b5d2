/**
 * The error policy's run scope (recovery ladders' hour, a run, a person's "the same for similar errors until this run
 * ends") saved to the node context and restored by a restarted Node-RED. Its times are the steady clock's
 * (performance.timeOrigin + performance.now()), which a new process starts again from the wall clock: an old
 * process's steady clock is ahead of the wall clock after a step back (NTP), behind it after a suspend (a VM paused,
 * CLOCK_MONOTONIC stops). Drawn histories of the old process (waits, steps back and forward, suspends, runs started and
 * ended), a restart after a drawn downtime, and these promises on the new process's clock:
 * - a choice "the same for similar errors" made after the restart, in the run saved, is in force at every later
 *   reading of that run (never taken for one made before the run began);
 * - with no run active, the ladders' counts go on when the restart is in the wall-clock hour of the save and start
 *   again otherwise (as a restart judged by the wall clock did; never by the old process's drifted clock).
 * LH_SEED / LH_CASES replay or extend the drawn histories.
 */
import assert from 'node:assert/strict';

import { addRunRule, type ClockPair, runRulesOf, RunScope } from '../../src/nodes/runs/run-scope';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 40;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const LADDER = 'rule-clot';

/** Two clocks of one process: the wall clock (steps, suspends) and the steady one (elapsed time only, from the wall). */
class ProcessClock {
  steady: number;
  constructor(public wall: number) {
    this.steady = wall;
  }
  pair(): ClockPair {
    return { steady: this.steady, wall: this.wall };
  }
  wait(ms: number): void {
    this.steady += ms;
    this.wall += ms;
  }
}

function sameHour(a: number, b: number): boolean {
  return Math.floor(a / HOUR) === Math.floor(b / HOUR);
}

describe('review: the error policy run scope restored after a restart of Node-RED', function () {
  this.timeout(15000);

  it(`reads the saved times on the new process's clock (seed ${SEED}, ${CASES} cases)`, function () {
    console.log(`      restart-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const trace: string[] = [];
      const old = new ProcessClock(Date.parse('2026-11-24T08:00:00.000Z') + rng.below(DAY));
      const scope = new RunScope();
      let running = false;
      for (let i = 0; i < 8; i++) {
        const what = rng.weighted({ wait: 3, back: 2, forward: 1, suspend: 1, run: 1, end: 1 });
        if (what === 'wait') old.wait(rng.int(0, 50 * MIN));
        else if (what === 'back') old.wall -= rng.pick([MIN, 20 * MIN, HOUR, 5 * HOUR, DAY]);
        else if (what === 'forward') old.wall += rng.pick([MIN, 20 * MIN, HOUR, 5 * HOUR, DAY]);
        else if (what === 'suspend') old.wall += rng.pick([10 * MIN, 2 * HOUR, 3 * DAY]);
        else if (what === 'run') scope.sighting({ key: `P|run${i}`, phase: 'active' }, old.steady);
        else scope.sighting({ key: '', phase: 'ended' }, old.steady);
        if (what === 'run') running = true;
        if (what === 'end') running = false;
        trace.push(what);
      }
      // an error counted just before the save (the policy saves after each decision)
      scope.occurrence(LADDER, 'before-restart', old.steady);
      const saved: unknown = JSON.parse(JSON.stringify(scope.snapshot(old.pair())));
      const downtime = rng.pick([10_000, 5 * MIN, 40 * MIN, 2 * HOUR]);
      const now = new ProcessClock(old.wall + downtime);
      trace.push(`restart after ${downtime} ms (old steady - wall: ${old.steady - old.wall} ms)`);
      const restored = new RunScope();
      restored.restore(saved, now.pair());
      const why = `seed ${SEED} case ${c}: ${trace.join(', ')}`;

      if (running) {
        const instrument = `http://restart-${SEED}-${c}.test`;
        now.wait(rng.int(1000, 10 * MIN));
        addRunRule(
          instrument,
          { source: 'A', match: { title: 'clot', severity: 'error' }, answer: 'Retry', by: 'ana', at: now.wall, errorKey: 'e1' },
          now.steady,
        );
        for (let r = 0; r < 3; r++) {
          now.wait(rng.int(1, 20 * MIN));
          const inForce = runRulesOf(instrument, restored.current(now.steady).since).length;
          assert.equal(inForce, 1, `the choice made after the restart is no longer in force (${why}, reading ${r})`);
        }
      } else {
        const next = restored.occurrence(LADDER, 'after-restart', now.steady);
        const expected = sameHour(old.wall, now.wall) ? 1 : 0;
        assert.equal(next, expected, `the ladder's count after the restart (${why})`);
      }
    }
  });

  it('a choice made 5 minutes after a restart stays in force in a run saved with the clock set back an hour', function () {
    const old = new ProcessClock(Date.parse('2026-11-24T10:00:00.000Z'));
    const scope = new RunScope();
    old.wait(10 * MIN);
    old.wall -= HOUR; // NTP: the old process's steady clock is an hour ahead of the wall clock
    scope.sighting({ key: '7|2026-11-24T09:10:00Z', phase: 'active' }, old.steady);
    old.wait(MIN);
    const saved: unknown = JSON.parse(JSON.stringify(scope.snapshot(old.pair())));
    const now = new ProcessClock(old.wall + 5 * MIN);
    const restored = new RunScope();
    restored.restore(saved, now.pair());
    const instrument = 'http://restart-example.test';
    addRunRule(
      instrument,
      { source: 'A', match: { title: 'clot', severity: 'error' }, answer: 'Retry', by: 'ana', at: now.wall, errorKey: 'e1' },
      now.steady,
    );
    now.wait(30_000); // the next similar error, half a minute later
    assert.equal(runRulesOf(instrument, restored.current(now.steady).since).length, 1, 'the choice is dropped');
  });
});
