/**
 * Review finding (low-medium): README: start "refuses before sending anything ... both refusals have msg.error.code
 * LH_BUSY, kind busy". judgeStart() also gives kind `busy` *after* create was sent (the instrument shows a run of
 * another protocol), so a flow that takes LH_BUSY as "nothing was sent, try again later" may create a second run.
 */
import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import { startRun } from '../../src/nodes/lh-run/start-run';
import { runControl, runStatus, startOptions } from './start-run.support';

describe('lh-run start: kind busy only when nothing was sent (issue 17 point 2, review 2)', function () {
  it('a start whose create was sent never fails with kind busy (LH_BUSY)', async function () {
    const served = [runStatus('Idle', null), runStatus('Running', 2)];
    let i = 0;
    const calls: string[] = [];
    const api = runControl({
      status: async () => served[Math.min(i++, served.length - 1)],
      createRun: async () => {
        calls.push('create');
        return { runId: 'r1' };
      },
    });
    const err = await startRun(api, startOptions({ protocol: { id: 1 } })).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof LhError);
    assert.deepEqual(calls, ['create']);
    assert.notEqual(err.kind, 'busy', `create was sent, yet: ${err.message} (kind ${err.kind}, code ${err.code})`);
  });
});
