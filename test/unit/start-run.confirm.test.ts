/**
 * Issue 17 point 2 (review 2): msg.confirmLoading sends load-complete only for the run this Node-RED left at
 * Loading on that instrument (and, with msg.runId, only when that run has this id). Property over what was left
 * there, what waits there now and the msg.runId given.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError, RunStartClaims, RunStateName, RunStatus } from '../../src/client';
import { RunControl, StartOptions, startRun } from '../../src/nodes/lh-run/start-run';
import { notedWrites, runControl, runStatus, startOptions } from './start-run.support';

/** A run status that names `protocolId` unless Idle. */
const status = (state: RunStateName, protocolId: number): RunStatus => runStatus(state, state === 'Idle' ? null : protocolId);

function api(served: RunStatus[], created: unknown, calls: string[]): RunControl {
  let i = 0;
  return runControl({
    status: async () => served[Math.min(i++, served.length - 1)],
    ...notedWrites(calls, created),
  });
}

function options(book: RunStartClaims, extra: Partial<StartOptions>): StartOptions {
  return startOptions({
    loadingMemory: {
      get: () => book.atLoading(),
      set: (protocolId, runId) => book.leftAtLoading(protocolId, runId),
      forget: () => book.forgetLoading(),
    },
    ...extra,
  });
}

describe('lh-run start: confirm only the run this Node-RED left at Loading', function () {
  it('refuses a run at Loading that no start of this Node-RED left there, naming msg.confirmLoading; sends nothing', async function () {
    const calls: string[] = [];
    const err = await startRun(
      api([status('Loading', 1)], {}, calls),
      options(new RunStartClaims(), { confirmLoading: true }),
    ).catch((e: unknown) => e);
    assert.ok(err instanceof LhError);
    assert.equal(err.field, 'confirmLoading');
    assert.match(err.message, /was not left there by a start of this Node-RED/);
    assert.deepEqual(calls, []);
  });

  it('property: load-complete only for the run left at Loading (its protocol, and its run id when msg.runId is given)', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.option(
          fc.record({ protocolId: fc.constantFrom(1, 2), runId: fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }) }),
          { nil: undefined },
        ),
        fc.constantFrom(1, 2),
        fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }),
        async (left, waiting, msgRunId) => {
          const book = new RunStartClaims();
          const calls: string[] = [];
          if (left) {
            // a start of this Node-RED stopped at Loading
            const stopped = await startRun(
              api(
                [status('Idle', 1), status('Loading', left.protocolId)],
                left.runId === undefined ? {} : { runId: left.runId },
                calls,
              ),
              options(book, { protocol: { id: left.protocolId }, stopAtLoading: true }),
            );
            assert.equal(stopped.outcome, 'loading');
          }
          calls.length = 0;
          const result = await startRun(
            api([status('Loading', waiting), status('Running', waiting)], {}, calls),
            options(book, { confirmLoading: true, confirmRunId: msgRunId }),
          ).catch((e: unknown) => e);
          const ours = left !== undefined && left.protocolId === waiting && (msgRunId === undefined || msgRunId === left.runId);
          assert.equal(calls.includes('load-complete'), ours, JSON.stringify({ left, waiting, msgRunId }));
          if (!ours) {
            assert.ok(result instanceof LhError);
            assert.equal(result.kind, 'validation');
            assert.ok(result.field === 'confirmLoading' || result.field === 'runId');
          } else {
            assert.equal(book.atLoading(), undefined, 'a confirmed run is no longer remembered at Loading');
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
