/**
 * Review finding (low-medium): README: start "refuses before sending anything ... both refusals have msg.error.code
 * LH_BUSY, kind busy". judgeStart() also gives kind `busy` *after* create was sent (the instrument shows a run of
 * another protocol), so a flow that takes LH_BUSY as "nothing was sent, try again later" may create a second run.
 */
import assert from 'node:assert/strict';
import { LhError, RUN_STATE_NAMES, RunStateName, RunStatus } from '../../src/client';
import { RunControl, startRun } from '../../src/nodes/lh-run/start-run';

function status(state: RunStateName, protocolId: number | null): RunStatus {
  return {
    protocolRunState: state,
    stateCode: RUN_STATE_NAMES.indexOf(state),
    isRunInProgress: state !== 'Idle',
    isSimulation: false,
    protocolId,
    protocolName: protocolId === null ? null : `P${protocolId}`,
    currentStep: null,
    startTime: null,
    estimatedEndTime: null,
  } as RunStatus;
}

describe('lh-run start: kind busy only when nothing was sent (issue 17 point 2, review 2)', function () {
  it('a start whose create was sent never fails with kind busy (LH_BUSY)', async function () {
    const served = [status('Idle', null), status('Running', 2)];
    let i = 0;
    const calls: string[] = [];
    const api = {
      status: async () => served[Math.min(i++, served.length - 1)],
      protocolNames: async () => [],
      validateProtocol: async () => ({ protocolId: 1, isValid: true, validationErrors: [] }),
      createRun: async () => {
        calls.push('create');
        return { runId: 'r1' };
      },
      loadInstructions: async () => [],
      loadComplete: async () => ({}),
      listRunData: async () => [],
    } as unknown as RunControl;
    const err = await startRun(api, {
      protocol: { id: 1 },
      simulate: false,
      stopAtLoading: false,
      confirmLoading: false,
      pollMs: 1,
      timeoutMs: 10_000,
      sleep: async () => undefined,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof LhError);
    assert.deepEqual(calls, ['create']);
    assert.notEqual(err.kind, 'busy', `create was sent, yet: ${err.message} (kind ${err.kind}, code ${err.code})`);
  });
});
