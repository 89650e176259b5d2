/**
 * A run start's holds (src/client/run-starts.ts) against the wall clock set back or jittering back (an NTP step, a VM
 * resumed) at drawn moments: a create that got no answer holds other starts for its hold at most (never for the step,
 * never released at once by the step), and a status read started after a run was left at Loading forgets it when it
 * shows the run gone, whatever the clock says (else a run an operator prepares there would be confirmed as ours).
 */
import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import { RunStartClaims } from '../../src/client/run-starts';
import { Rng } from '../support/prng';

const SEED = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const CASES = Number(process.env.LH_CASES ?? 50);
const HOLD = 120_000;

function drawStep(rng: Rng): number {
  const draw = rng.next();
  if (draw < 0.5) return -(rng.pick([1_000, 60_000, 3_600_000, 3 * 86_400_000]) + rng.int(0, 999));
  if (draw < 0.8) return -1; // jitter: a reading a millisecond back
  return rng.int(1, 3_600_000); // forward
}

function busy(fn: () => void): boolean {
  try {
    fn();
    return false;
  } catch (err) {
    if (err instanceof LhError && err.kind === 'busy') return true;
    throw err;
  }
}

describe('review: run starts after the wall clock steps back', function () {
  it(`an unanswered create holds the next start at most its hold, however the clock stepped (seed ${SEED})`, function () {
    for (let c = 0; c < CASES; c++) {
      const rng = new Rng(SEED + c);
      let mono = 0;
      let offset = rng.int(0, 1e12);
      // the wall clock steps; the steady one (performance's in the package) does not
      const claims = new RunStartClaims(
        () => mono + offset,
        () => mono,
      );
      const first = claims.claim('protocol 1', 'start');
      first.sendingCreate();
      first.createUnanswered(HOLD);
      first.release();
      const steps: number[] = [];
      // probes over twice the hold, the clock stepping at drawn moments
      for (let t = 0; t <= 3 * HOLD; t += rng.int(1, 20_000)) {
        mono = t;
        if (rng.chance(0.2)) {
          const by = drawStep(rng);
          offset += by;
          steps.push(by);
        }
        const next = claims.claim('protocol 2', 'start');
        const held = busy(() => next.refuseWhileCreateUnanswered());
        next.release();
        // held for its hold after the send, whatever the steps: a step back after the hold ran out (before anyone
        // looked) revived it for another hold; LH_SEED=853600587 LH_CASES=400, case 77, held at 243377 ms
        if (t < HOLD) assert.ok(held, `case ${c}: released at ${t} ms, before the hold (steps ${steps.join(' ')})`);
        else assert.ok(!held, `case ${c}: still held at ${t} ms, past the hold (steps ${steps.join(' ')})`);
      }
    }
  });

  it(`a read started after the unanswered create that shows its run ends the hold; one started before never (seed ${SEED})`, function () {
    for (let c = 0; c < CASES; c++) {
      const rng = new Rng(SEED + c);
      let mono = rng.int(0, 1e6);
      let offset = rng.int(0, 1e12);
      const claims = new RunStartClaims(
        () => mono + offset,
        () => mono,
      );
      // a read already under way when the create went out: what it shows may be an older run
      const early = claims.readingStatus();
      mono += rng.int(1, 50);
      const first = claims.claim('protocol 1', 'start');
      first.sendingCreate();
      mono += rng.int(1, 30_000); // the create's deadline passes
      const between = drawStep(rng);
      offset += between;
      first.createUnanswered(HOLD);
      first.release();
      early('Running');
      const next = claims.claim('protocol 2', 'start');
      assert.ok(
        busy(() => next.refuseWhileCreateUnanswered()),
        `case ${c}: a read started before the send ended the hold (step ${between} ms)`,
      );
      next.release();
      // a read started after the send, the clock stepping before it: it shows the run, which ends before the hold
      mono += rng.int(1, 1_000);
      const after = drawStep(rng);
      offset += after;
      claims.readingStatus()('Running');
      mono += rng.int(1, 10_000);
      const later = claims.claim('protocol 3', 'start');
      assert.ok(
        !busy(() => later.refuseWhileCreateUnanswered()),
        `case ${c}: the run showed, yet starts were held after it (steps ${between} ${after} ms)`,
      );
      later.release();
    }
  });

  it(`a read started after a run was left at Loading forgets it when it shows another state (seed ${SEED})`, function () {
    for (let c = 0; c < CASES; c++) {
      const rng = new Rng(SEED + c);
      let now = rng.int(0, 1e12);
      const claims = new RunStartClaims(() => now);
      claims.leftAtLoading(7, 'run-1');
      const by = drawStep(rng);
      now += by;
      const before = claims.atLoading();
      assert.equal(before?.protocolId, 7);
      const read = claims.readingStatus();
      now += rng.int(0, 5);
      read(rng.pick(['Idle', 'Running', 'Aborting'] as const));
      assert.equal(claims.atLoading(), undefined, `case ${c}: the clock stepped ${by} ms: the run left at Loading was kept`);
    }
  });
});
