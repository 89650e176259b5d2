import assert from 'node:assert/strict';

import fc from 'fast-check';

import { parseRunStatus, RUN_RESULT_WORDS, RUN_STATE_NAMES, RunStateName, RunStatus } from '../../src/client';
import {
  durationOf,
  matchRecord,
  newMemory,
  observe,
  progressDue,
  progressOf,
  resultOf,
  TrackedRun,
  triggersPoll,
} from '../../src/nodes/runs/run-decisions';

const T0 = Date.parse('2026-03-01T10:00:00Z');

function status(state: number | string, extra: Record<string, unknown> = {}): RunStatus {
  return parseRunStatus({
    protocolRunState: state,
    protocolId: state === 0 ? 0 : 1,
    protocolName: state === 0 ? '' : 'Demo',
    startTime: '0001-01-01T00:00:00',
    estimatedEndTime: '0001-01-01T00:00:00',
    ...extra,
  });
}

describe('lh-run-watch decisions (pure)', function () {
  it('reports each state change once, the first with previousState null', function () {
    const m = newMemory();
    assert.deepEqual(observe(m, status(0), T0).change, { state: 'Idle', previousState: null });
    assert.equal(observe(m, status(0), T0 + 1).change, undefined);
    assert.deepEqual(observe(m, status('Scheduling'), T0 + 2).change, { state: 'Scheduling', previousState: 'Idle' });
    assert.deepEqual(observe(m, status(4), T0 + 3).change, { state: 'Running', previousState: 'Scheduling' });
    assert.equal(observe(m, status('running'), T0 + 4).change, undefined);
  });

  it('reports a finished run once, when the state is back to Idle, with the states seen', function () {
    const m = newMemory();
    observe(m, status(0), T0);
    observe(m, status(3), T0 + 1000);
    observe(m, status(4, { startTime: '2026-03-01T10:00:02Z' }), T0 + 2000);
    const end = observe(m, status(0), T0 + 62_000);
    assert.ok(end.finished);
    assert.deepEqual(end.finished.run.states, ['Loading', 'Running']);
    assert.equal(end.finished.run.protocolName, 'Demo');
    assert.equal(durationOf(end.finished.run, end.finished.endedAt), 60_000);
    assert.equal(observe(m, status(0), T0 + 63_000).finished, undefined);
  });

  it('reports a run replaced by another between two polls as finished', function () {
    const m = newMemory();
    observe(m, status(4, { startTime: '2026-03-01T10:00:00Z' }), T0);
    const seen = observe(m, status(4, { startTime: '2026-03-01T11:00:00Z' }), T0 + 3_600_000);
    assert.equal(seen.finished?.run.startTime, '2026-03-01T10:00:00.000Z');
    assert.equal(m.run?.startTime, '2026-03-01T11:00:00.000Z');
  });

  it('takes the result from the run record by whole known words, else from an abort the watch saw', function () {
    const r = (runResult: unknown, states: RunStateName[]): string => resultOf({ runResult }, states).result;
    assert.equal(r('Completed', ['Running', 'Aborting']), 'completed');
    assert.equal(r('Aborted', []), 'aborted');
    assert.equal(r('Failed', []), 'failed');
    for (const word of ['Not completed', 'Incomplete', 'Unsuccessful', 'NotSuccessful', 'Success?', 'Completed with errors']) {
      assert.deepEqual(resultOf({ runResult: word }, ['Running']), { result: 'unknown', resultText: word }, word);
    }
    assert.deepEqual(resultOf({}, ['Running']), { result: 'unknown', resultText: null }, 'a record without a result');
    assert.deepEqual(resultOf(undefined, ['Running']), { result: 'unknown', resultText: null }, 'no record, no abort seen');
    assert.equal(resultOf(undefined, ['Running', 'Aborting']).result, 'aborted');
    assert.equal(resultOf(undefined, ['Running', 'ErrorHandling', 'Aborting']).result, 'failed');
  });

  it('property: over every path of states and any record word, completed only from a record in a completed word', function () {
    const states = fc.array(fc.constantFrom(...RUN_STATE_NAMES), { maxLength: 12 });
    const record = fc.option(
      fc.record({
        runResult: fc.oneof(
          fc.string({ maxLength: 16 }),
          fc.constantFrom('Completed', ' success ', 'Not completed', 'Incomplete', 'Success?'),
          fc.integer(),
        ),
      }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(states, record, (path, rec) => {
        const { result, resultText } = resultOf(rec, path);
        const word = typeof rec?.runResult === 'string' ? rec.runResult.trim().toLowerCase() : undefined;
        assert.equal(result === 'completed', word !== undefined && RUN_RESULT_WORDS.completed.includes(word));
        if (rec) assert.equal(resultText, String(rec.runResult));
        else assert.equal(resultText, null);
        if (!rec && !path.includes('Aborting')) assert.equal(result, 'unknown');
      }),
      { numRuns: 1000 },
    );
  });

  it('matches the run record by protocol and start time', function () {
    const run: TrackedRun = {
      protocolId: 1,
      protocolName: 'Demo',
      startTime: '2026-03-01T10:00:00.000Z',
      firstSeenAt: T0,
      states: [],
    };
    const records = [
      { id: 'other', protocolName: 'Other', startTime: '2026-03-01T10:00:00Z' },
      { id: 'old', protocolName: 'Demo', startTime: '2026-03-01T09:00:00Z' },
      { id: 'this', protocolName: 'Demo', startTime: '2026-03-01T10:00:01Z' },
    ];
    assert.equal(matchRecord(records, run)?.id, 'this');
    assert.equal(matchRecord(records.slice(0, 2), run), undefined);
  });

  it('computes progress and eta from start and estimated end, clamped to 0..1; none without both dates', function () {
    const s = status(4, { startTime: '2026-03-01T10:00:00Z', estimatedEndTime: '2026-03-01T10:10:00Z' });
    assert.deepEqual(progressOf(s, T0 + 150_000), { progress: 0.25, eta: '2026-03-01T10:10:00.000Z', remainingMs: 450_000 });
    assert.equal(progressOf(s, T0 + 3_600_000)?.progress, 1);
    assert.equal(progressOf(status(4), T0), undefined);
    assert.equal(
      progressOf(status(0, { startTime: '2026-03-01T10:00:00Z', estimatedEndTime: '2026-03-01T10:10:00Z' }), T0),
      undefined,
    );
  });

  it('rate-limits progress', function () {
    const m = newMemory();
    assert.equal(progressDue(m, T0, 5000), true);
    assert.equal(progressDue(m, T0 + 4999, 5000), false);
    assert.equal(progressDue(m, T0 + 5000, 5000), true);
    assert.equal(progressDue(m, T0 + 5001, 0), true);
  });

  it('polls at once on a pushed run status or finished run (any letter case), not on other events', function () {
    for (const code of ['RunStatus', 'runstatus', 'Finished', 'FINISHED', ' protocolRunStatus '])
      assert.equal(triggersPoll(code), true, code);
    for (const code of ['TimeRemaining', 'messagebox', 'maintenancedata', '', 'RuntimeError'])
      assert.equal(triggersPoll(code), false, code);
  });
});
