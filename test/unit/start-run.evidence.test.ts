/**
 * Issue 17, point 2: lh-run start reports `started` only on the instrument's evidence that this start's run got past
 * Loading and was running. Scripted instruments (the run states served one status read after another), examples of
 * the review and a property over every run-state path.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError, mapRunResult, RUN_STATE_NAMES, RunStartClaims, RunStateName } from '../../src/client';
import { RunControl, StartOptions, StartResult, startRun } from '../../src/nodes/lh-run/start-run';
import { notedWrites, runControl, runStatus, startOptions } from './start-run.support';

interface Served {
  state: RunStateName;
  /** the protocol the status names; null: none */
  protocolId: number | null;
}

class PathExhausted extends Error {}

/** A scripted instrument: serves `path` one status read after another; sleeping past its end throws PathExhausted. */
function instrument(
  path: (RunStateName | Served)[],
  records: Record<string, unknown>[] = [],
  created: unknown = { runId: 'r1' },
): RunControl & { calls: string[]; served: Served[]; sleep(): Promise<void> } {
  const steps: Served[] = path.map((p) => (typeof p === 'string' ? { state: p, protocolId: p === 'Idle' ? null : 1 } : p));
  const calls: string[] = [];
  const served: Served[] = [];
  let i = 0;
  const control = runControl({
    status: async () => {
      calls.push('status');
      const step = steps[Math.min(i++, steps.length - 1)];
      served.push(step);
      return runStatus(step.state, step.protocolId);
    },
    ...notedWrites(calls, created),
    listRunData: async () => {
      calls.push('run-data');
      return records.map((r) => ({ ...r, id: String(r.id) }));
    },
  });
  return Object.assign(control, {
    calls,
    served,
    sleep: async () => {
      if (i >= steps.length) throw new PathExhausted('the scripted path is over');
    },
  });
}

function options(api: { sleep(): Promise<void> }, extra: Partial<StartOptions> = {}): StartOptions {
  return startOptions({ protocol: { id: 1 }, timeoutMs: 60_000, sleep: () => api.sleep(), ...extra });
}

async function outcome(
  api: RunControl & { sleep(): Promise<void> },
  extra: Partial<StartOptions> = {},
): Promise<StartResult | LhError> {
  try {
    return await startRun(api, options(api, extra));
  } catch (err) {
    if (err instanceof PathExhausted) throw err;
    assert.ok(err instanceof LhError, String(err));
    return err;
  }
}

describe('lh-run start: started only on the instrument’s evidence (issue 17, point 2)', function () {
  it('fails a run that went Scheduling → Aborting → Idle, naming the states (was: started)', async function () {
    const api = instrument(['Idle', 'Scheduling', 'Aborting', 'Idle']);
    const result = await outcome(api);
    assert.ok(result instanceof LhError, 'not started');
    assert.equal(result.kind, 'instrument');
    assert.match(
      result.message,
      /the run did not start: the run was aborted before it reached Loading \(Scheduling → Aborting\)/,
    );
    assert.ok(!api.calls.includes('load-complete'), 'no load-complete for an aborted run');
  });

  it('fails a run aborted at the deck check after load-complete (Loading → Aborting), never started', async function () {
    const api = instrument(['Idle', 'Scheduling', 'Loading', 'Loading', 'Aborting', 'Idle']);
    const result = await outcome(api);
    assert.ok(result instanceof LhError, 'not started');
    assert.match(
      result.message,
      /the run was aborted after load-complete before it was seen running \(Scheduling → Loading → Aborting\)/,
    );
    assert.ok(api.calls.includes('load-complete'));
  });

  it('waits through an error handling at the deck check and reports started only once Running is seen', async function () {
    const api = instrument(['Idle', 'Loading', 'Loading', 'ErrorHandling', 'ErrorHandling', 'Running']);
    const result = await outcome(api);
    assert.ok(!(result instanceof LhError), String(result));
    assert.equal(result.outcome, 'started');
    assert.equal(result.status.protocolRunState, 'Running');
  });

  it('does not take a run of another protocol for its own', async function () {
    const api = instrument(['Idle', 'Scheduling', { state: 'Running', protocolId: 7 }]);
    const result = await outcome(api);
    assert.ok(result instanceof LhError);
    assert.equal(result.kind, 'instrument', 'create was sent: not busy');
    assert.match(result.message, /a run of protocol 7 \(Running\), not of protocol 1 that this start created/);
  });

  for (const word of ['Not completed', 'Incomplete', 'Unsuccessful', 'NotSuccessful', 'Success?', 'Cancelled', '']) {
    it(`fails a run back at Idle after load-complete whose record says ${JSON.stringify(word)} (was: started, all but Cancelled)`, async function () {
      const api = instrument(
        ['Idle', 'Loading', 'Idle'],
        [{ id: 'r1', protocolName: 'P1', startTime: new Date().toISOString(), runResult: word }],
      );
      const result = await outcome(api);
      assert.ok(result instanceof LhError, 'not started');
      assert.match(result.message, new RegExp(`its run record r1 says ${JSON.stringify(word).replace(/[?]/g, '\\?')}`));
    });
  }

  it('takes only the record of the run id the create answer gave, not a newer completed record of another run', async function () {
    const now = new Date().toISOString();
    const api = instrument(
      ['Idle', 'Loading', 'Idle'],
      [{ id: 'someone-else', protocolName: 'P1', startTime: now, runResult: 'Completed' }],
    );
    const result = await outcome(api);
    assert.ok(result instanceof LhError);
    assert.match(result.message, /lists no run record of it/);
  });

  it('refuses a second start while one is in flight on the instrument, before anything is sent (kind busy)', async function () {
    const claims = new RunStartClaims();
    const claim = (what: string) => claims.claim(what, 'start-run');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = instrument(['Idle', 'Loading', 'Running']);
    const firstStatus = first.status;
    first.status = async () => {
      await gate; // the first start is reading the status when the second arrives
      return firstStatus();
    };
    const second = instrument(['Idle', 'Loading', 'Running']);
    const one = startRun(first, options(first, { claim }));
    const two = await outcome(second, { claim });
    assert.ok(two instanceof LhError);
    assert.equal(two.kind, 'busy');
    assert.equal(two.code, 'LH_BUSY');
    assert.match(
      two.message,
      /^start refused: another start on this instrument is in progress \(protocol 1, for \d+ s\); nothing was sent/,
    );
    assert.deepEqual(second.calls, [], 'the second start sent nothing');
    release();
    assert.equal((await one).outcome, 'started');
    assert.equal(claims.current(), undefined, 'the claim is released after the start');
    const third = instrument(['Idle', 'Loading', 'Running']);
    assert.equal(((await outcome(third, { claim })) as StartResult).outcome, 'started', 'a later start runs');
    const failing = instrument(['Idle', 'Scheduling', 'Aborting']);
    assert.ok((await outcome(failing, { claim })) instanceof LhError);
    assert.equal(claims.current(), undefined, 'a failed start releases its claim');
  });

  describe('property: every run-state path', function () {
    const ACTIVE: RunStateName[] = RUN_STATE_NAMES.filter((s) => s !== 'Idle');
    const RUNNING: RunStateName[] = ['Running', 'Pausing', 'Paused'];
    const served = fc.record({
      state: fc.constantFrom(...RUN_STATE_NAMES),
      protocolId: fc.constantFrom<number | null>(1, 1, 1, 2, null),
    });
    const words = fc.oneof(
      fc.constantFrom('Completed', 'completed', ' COMPLETED ', 'Success', 'Aborted', 'Failed', 'Not completed', 'Incomplete'),
      fc.constantFrom('Unsuccessful', 'NotSuccessful', 'Success?', 'Completed with errors', 'Completed.', 'Complete d', ''),
      fc.string({ maxLength: 12 }),
    );

    /** Whether the prefix before index `at` is one a start may wait through on its way to `at`. */
    function cleanBefore(path: Served[], at: number): boolean {
      let active = false;
      let loading = false;
      for (const s of path.slice(0, at)) {
        if (s.state !== 'Idle' && s.protocolId !== null && s.protocolId !== 1) return false; // another protocol
        if (s.state === 'Aborting' || RUNNING.includes(s.state)) return false;
        if (s.state === 'Idle' && active) return false; // ended
        if ((s.state === 'Scheduling' || s.state === 'Scheduled') && loading) return false;
        if (s.state !== 'Idle') active = true;
        if (s.state === 'Loading') loading = true;
      }
      return true;
    }

    it('reports started only after the instrument served this protocol running (or a completed record), and then always', async function () {
      await fc.assert(
        fc.asyncProperty(
          fc.array(served, { minLength: 1, maxLength: 12 }),
          words,
          fc.boolean(),
          async (path, word, withRecord) => {
            const records = withRecord
              ? [{ id: 'r1', protocolName: 'P1', startTime: new Date().toISOString(), runResult: word }]
              : [];
            const api = instrument([{ state: 'Idle', protocolId: null }, ...path], records); // the read before create: Idle
            let result: StartResult | LhError | 'waiting';
            try {
              result = await outcome(api);
            } catch (err) {
              if (!(err instanceof PathExhausted)) throw err;
              result = 'waiting';
            }
            if (result instanceof LhError && api.calls.includes('create')) {
              assert.notEqual(result.kind, 'busy', `create was sent, yet busy: ${result.message}`);
            }
            const seen = api.served.slice(1);
            // a status that names no protocol does not contradict this start (the instrument may leave it out)
            const firstRunning = seen.findIndex((s) => RUNNING.includes(s.state) && s.protocolId !== 2);
            const abortedFirst = seen.findIndex((s) => s.state === 'Aborting');
            if (result !== 'waiting' && !(result instanceof LhError) && result.outcome === 'started') {
              const last = seen[seen.length - 1];
              if (RUNNING.includes(last.state)) {
                assert.equal(last.protocolId === 1 || last.protocolId === null, true, 'a run of this protocol');
                assert.ok(abortedFirst < 0 || abortedFirst > seen.length - 1, 'no abort before');
              } else {
                // back to Idle after load-complete: only a record that says completed in a known word
                assert.equal(last.state, 'Idle');
                assert.ok(api.calls.includes('load-complete'));
                assert.equal(withRecord && mapRunResult(word).result, 'completed', `record ${JSON.stringify(word)}`);
              }
              assert.ok(!seen.slice(0, -1).some((s) => s.state === 'Aborting'), 'never started after an abort');
            }
            // liveness: this protocol's run seen running, after states a start waits through, is started
            const ours = path.findIndex((s) => RUNNING.includes(s.state) && (s.protocolId === 1 || s.protocolId === null));
            if (ours >= 0 && cleanBefore(path, ours)) {
              assert.ok(result !== 'waiting' && !(result instanceof LhError), `started on ${path.map((s) => s.state).join(',')}`);
              assert.equal(result.outcome, 'started');
            }
            if (firstRunning < 0 && result !== 'waiting' && !(result instanceof LhError) && result.outcome === 'started') {
              assert.ok(api.calls.includes('run-data'), 'without a running state only the run record can tell');
            }
          },
        ),
        { numRuns: 600 },
      );
    });

    it('refuses (kind busy) before sending anything whenever the instrument shows a run before create', async function () {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...ACTIVE), fc.constantFrom<number | null>(1, 2, null), async (state, protocolId) => {
          const api = instrument([{ state, protocolId }, 'Loading', 'Running']);
          const result = await outcome(api);
          assert.ok(result instanceof LhError);
          assert.equal(result.kind, 'busy');
          assert.match(result.message, /^start refused: a run of protocol .* is in progress/);
          assert.deepEqual(api.calls, ['status']);
        }),
      );
    });
  });
});
