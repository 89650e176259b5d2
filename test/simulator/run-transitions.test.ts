import { strict as assert } from 'node:assert';

import fc from 'fast-check';

import { HttpProblem } from '../../src/simulator/problem';
import {
  type ActiveRun,
  ALLOWED_STATES,
  armsForLater,
  loadCompleteOutcome,
  PHASE_SECONDS,
  phaseAfterEntering,
  rearmPlan,
  remainingAfterCheckpoint,
  remainingSeconds,
  requireState,
  resultAtEnd,
  RUN_STATES,
  type RunAction,
  type RunStateName,
} from '../../src/simulator/run-transitions';

function runIn(state: RunStateName, over: Partial<ActiveRun> = {}): ActiveRun {
  return {
    runId: 'r1',
    protocolId: 1,
    protocolName: 'Demo protocol',
    simulate: true,
    userName: 'admin',
    steps: [
      { name: 'a', stepType: 'Aspirate', seconds: 30, fields: {} },
      { name: 'b', stepType: 'Dispense', seconds: 10, fields: {} },
      { name: 'c', stepType: 'Shake', seconds: 600, fields: {} },
    ],
    state,
    index: 0,
    remaining: 30,
    armedErrors: [],
    errorLog: [],
    ...over,
  };
}

const ACTIONS = Object.keys(ALLOWED_STATES) as RunAction[];

describe('simulator: run transitions (pure decisions of the run state machine)', function () {
  it('an operation is allowed exactly in its states; elsewhere a 409 naming the operation and the state', function () {
    fc.assert(
      fc.property(fc.constantFrom(...ACTIONS), fc.constantFrom(...RUN_STATES), (action, state) => {
        const run = runIn(state);
        if (ALLOWED_STATES[action].includes(state)) {
          assert.equal(requireState(run, action), run);
        } else {
          assert.throws(
            () => requireState(run, action),
            (e: unknown) =>
              e instanceof HttpProblem && e.status === 409 && e.message === `Cannot ${action} while the run is ${state}.`,
          );
        }
      }),
    );
    assert.throws(() => requireState(undefined, 'pause'), /Cannot pause: no run is in progress\./);
    // the table as the instrument behaves: loading only at Loading, resume also while still Pausing
    assert.deepEqual(ALLOWED_STATES['load-complete'], ['Loading']);
    assert.deepEqual(ALLOWED_STATES.pause, ['Running']);
    assert.deepEqual(ALLOWED_STATES.resume, ['Paused', 'Pausing']);
    // abort stops every active state but the ones already ending
    assert.deepEqual(
      RUN_STATES.filter((s) => !ALLOWED_STATES.abort.includes(s)),
      ['Idle', 'Aborting'],
    );
  });

  it('the passing states lead on by themselves; a run scripted to end while Scheduling aborts instead', function () {
    assert.deepEqual(phaseAfterEntering('Scheduling'), { seconds: PHASE_SECONDS.scheduling, then: 'Scheduled' });
    assert.deepEqual(phaseAfterEntering('Scheduling', { at: 'scheduling' }), { seconds: 2, then: 'abort' });
    assert.deepEqual(phaseAfterEntering('Scheduling', { at: 'deck-check' }), { seconds: 2, then: 'Scheduled' });
    assert.deepEqual(phaseAfterEntering('Scheduled'), { seconds: 1, then: 'Loading' });
    assert.deepEqual(phaseAfterEntering('Pausing'), { seconds: 2, then: 'Paused' });
    assert.deepEqual(phaseAfterEntering('Aborting'), { seconds: 3, then: 'finish' });
  });

  it('after a restart, only states that move by themselves get a timer again', function () {
    const planned = Object.fromEntries(RUN_STATES.map((s) => [s, rearmPlan(s)]));
    assert.deepEqual(planned, {
      Idle: undefined,
      Scheduling: { seconds: 1, then: 'Loading' },
      Scheduled: { seconds: 1, then: 'Loading' },
      Loading: undefined,
      Running: 'step',
      Pausing: { seconds: 2, then: 'Paused' },
      Paused: undefined,
      Aborting: { seconds: 3, then: 'finish' },
      ErrorHandling: undefined,
      Reloading: undefined,
    });
  });

  it('simulated time: elapsed real ms times the speed, booked into the running step, never below zero', function () {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0.001, max: 100_000, noNaN: true }),
        fc.integer({ min: 0, max: 2 }),
        (remaining, elapsedMs, speed, index) => {
          const run = runIn('Running', { remaining, index, segmentStart: 1_000 });
          const now = 1_000 + elapsedMs;
          const left = remainingAfterCheckpoint(run, now, speed);
          assert.ok(left >= 0 && left <= remaining + 1e-9, `${left} of ${remaining}`);
          assert.ok(Math.abs(left - Math.max(0, remaining - (elapsedMs * speed) / 1000)) < 1e-9);
          const later = run.steps.slice(index + 1).reduce((sum, s) => sum + s.seconds, 0);
          assert.ok(remainingSeconds(run, now, speed) >= 0);
          // a paused run's clock stands still: only what is booked counts
          const paused = remainingSeconds({ ...run, state: 'Paused' }, now, speed);
          assert.ok(Math.abs(paused - (remaining + later)) < 1e-9, `${paused} vs ${remaining + later}`);
        },
      ),
    );
  });

  it('load-complete cancels, aborts at a scripted deck check, or starts; the end result follows endNext', function () {
    assert.equal(loadCompleteOutcome(runIn('Loading'), 'CANCEL'), 'cancel');
    assert.equal(loadCompleteOutcome(runIn('Loading', { scripted: { at: 'deck-check' } }), 'Run'), 'abort');
    assert.equal(loadCompleteOutcome(runIn('Loading', { scripted: { at: 'deck-check' } }), 'cancel'), 'cancel');
    assert.equal(loadCompleteOutcome(runIn('Loading'), undefined), 'start');
    assert.equal(resultAtEnd(runIn('Running')), 'Completed');
    assert.equal(resultAtEnd(runIn('Running', { scripted: { at: 'end' } })), 'Completed');
    assert.equal(resultAtEnd(runIn('Running', { scripted: { at: 'end', result: 'Not completed' } })), 'Not completed');
    assert.equal(resultAtEnd(runIn('Running', { scripted: { at: 'deck-check', result: 'Aborted' } })), 'Completed');
  });

  it('an error for a later step waits for it; one for the running step or none is raised now; out of range is a 400', function () {
    const started = runIn('Running', { startTime: 0, index: 1 });
    assert.equal(armsForLater(started, undefined), false);
    assert.equal(armsForLater(started, 2), false);
    assert.equal(armsForLater(started, 3), true);
    assert.equal(armsForLater(runIn('Loading'), 1), true, 'before the run starts every step is later');
    for (const bad of [0, 4, 1.5]) {
      assert.throws(() => armsForLater(started, bad), /atStep must be a step number from 1 to 3\./);
    }
  });
});
