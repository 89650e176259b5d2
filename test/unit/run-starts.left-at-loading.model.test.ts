/**
 * Review (runs and live events): the run this Node-RED left at Loading is forgotten when a status read saw it leave
 * Loading, so a run an operator prepares at the instrument afterwards is not confirmed as this Node-RED's. Model-based,
 * seeded: an instrument whose run is left at Loading by this Node-RED, aborted, or created by an operator, while
 * status reads start and are answered out of order with the state at their start or at their answer.
 *  - never forgotten while this Node-RED's run still waits at Loading (a read answered late, with a state from before
 *    the run was left there, tells nothing about it);
 *  - forgotten once a read that started after that run was aborted has shown any state but Loading.
 */
import assert from 'node:assert/strict';

import { RunStartClaims, type RunStateName } from '../../src/client';
import { Rng } from '../support/prng';

interface Read {
  startedAt: number;
  atStart: RunStateName;
  answer: (state: RunStateName) => void;
}

function runModel(seed: number, steps: number): void {
  const rng = new Rng(seed);
  let now = 1_000;
  const claims = new RunStartClaims(() => now);
  let state: RunStateName = 'Idle';
  /** this Node-RED's run waits at Loading */
  let ours = false;
  /** when this Node-RED's last run left at Loading was aborted */
  let abortedAt: number | undefined;
  /** a read started after that abort has shown a state other than Loading */
  let seenGone = false;
  const reads: Read[] = [];
  const trace: string[] = [];

  for (let i = 0; i < steps; i++) {
    const op = rng.weighted({ tick: 3, leave: 2, abort: 2, operatorCreate: 2, readStart: 4, readAnswer: 4 });
    trace.push(op);
    switch (op) {
      case 'tick':
        now += rng.int(0, 3);
        break;
      case 'leave': // a start of this Node-RED: Scheduling, Loading, then (a round trip later, maybe 0 ms) remembered
        if (state !== 'Idle') break;
        state = 'Scheduling';
        now += rng.int(0, 2);
        state = 'Loading';
        now += rng.int(0, 2);
        claims.forgetLoading(); // its create replaced whatever was left before
        claims.leftAtLoading(1, `run-${i}`);
        ours = true;
        abortedAt = undefined;
        seenGone = false;
        break;
      case 'abort': // at the instrument's screen
        if (state === 'Idle') break;
        state = rng.chance(0.5) ? 'Aborting' : 'Idle';
        if (ours) abortedAt = now;
        ours = false;
        break;
      case 'operatorCreate':
        if (state === 'Aborting') state = 'Idle';
        if (state !== 'Idle') break;
        state = rng.pick(['Scheduling', 'Loading'] as const);
        break;
      case 'readStart':
        reads.push({ startedAt: now, atStart: state, answer: claims.readingStatus() });
        break;
      case 'readAnswer': {
        if (reads.length === 0) break;
        const [read] = reads.splice(rng.below(reads.length), 1);
        // the instrument answered at some moment between the read's start and now
        const shown = rng.chance(0.5) ? read.atStart : state;
        read.answer(shown);
        trace.push(`(read of ${read.startedAt} at ${now}: ${shown})`);
        if (abortedAt !== undefined && read.startedAt > abortedAt && shown !== 'Loading') seenGone = true;
        break;
      }
    }
    const where = `seed ${seed}, step ${i}: ${trace.slice(-14).join(' ')}`;
    if (ours) assert.ok(claims.atLoading(), `forgotten while it still waits at Loading (${where})`);
    if (seenGone) assert.equal(claims.atLoading(), undefined, `kept although a read after its abort saw it gone (${where})`);
  }
}

describe('the run left at Loading, forgotten when a status read saw it leave (review, model)', function () {
  it('property: kept while it waits there whatever late answers say, gone once a later read saw it gone; 400 histories', function () {
    for (let seed = 1; seed <= 400; seed++) runModel(seed, 80);
  });
});
