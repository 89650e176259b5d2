import assert from 'node:assert/strict';

import { LhError, RunStatus } from '../../src/client';
import { RunControl, StartOptions, startRun } from '../../src/nodes/lh-run/start-run';

/**
 * A scripted instrument: the run states it serves one status call after another, and its run records (listed once
 * load-complete was sent, as the record of a run appears when it ends; the record with id `old` is listed from the
 * start).
 */
function instrument(states: string[], records: Record<string, unknown>[] = []): RunControl & { calls: string[] } {
  const calls: string[] = [];
  let i = 0;
  const base = {
    isRunInProgress: false,
    isSimulation: false,
    protocolId: 1,
    protocolName: 'Demo',
    currentStep: null,
    startTime: null,
    estimatedEndTime: null,
  };
  const api = {
    calls,
    status: async () => {
      calls.push('status');
      return { ...base, protocolRunState: states[Math.min(i++, states.length - 1)] } as unknown as RunStatus;
    },
    protocolNames: async () => [],
    validateProtocol: async () => ({ isValid: true, validationErrors: [] }),
    createRun: async () => {
      calls.push('create');
      return {};
    },
    loadInstructions: async () => [],
    loadComplete: async () => {
      calls.push('load-complete');
    },
    listRunData: async () => {
      calls.push('run-data');
      return records.filter((r) => r.id === 'old' || calls.includes('load-complete')).map((r) => ({ id: String(r.id), ...r }));
    },
  };
  return api as unknown as RunControl & { calls: string[] };
}

const options: StartOptions = {
  protocol: { id: 1 },
  simulate: false,
  stopAtLoading: false,
  confirmLoading: false,
  pollMs: 1,
  timeoutMs: 5000,
  sleep: async () => undefined,
};

describe('lh-run start: what counts as started', function () {
  it('reports started once the run is past Loading', async function () {
    const result = await startRun(instrument(['Idle', 'Loading', 'Loading', 'Running']), options);
    assert.equal(result.outcome, 'started');
    assert.equal(result.status.protocolRunState, 'Running');
  });

  it('fails when the instrument goes back to Idle right after load-complete and lists no run record of it', async function () {
    const api = instrument(['Idle', 'Loading', 'Loading', 'Idle']);
    await assert.rejects(startRun(api, options), (err: LhError) => {
      assert.equal(err.kind, 'instrument');
      assert.match(
        err.message,
        /the run did not start: the instrument went back to Idle after load-complete, and the instrument lists no run record of it/,
      );
      return true;
    });
    assert.ok(api.calls.includes('run-data'));
  });

  it("fails naming the run record's result when the run was cancelled before it ran", async function () {
    const now = new Date().toISOString();
    const api = instrument(
      ['Idle', 'Loading', 'Idle'],
      [
        { id: 'old', protocolName: 'Demo', startTime: '2020-01-01T00:00:00Z', runResult: 'Completed' },
        { id: 'r9', protocolName: 'Demo', startTime: now, runResult: 'Cancelled' },
      ],
    );
    await assert.rejects(startRun(api, options), /its run record r9 says "Cancelled"/);
  });

  it('reports started with the run record when the run finished between two polls', async function () {
    const api = instrument(
      ['Idle', 'Loading', 'Idle'],
      [{ id: 'r10', protocolName: 'Demo', startTime: new Date().toISOString(), runResult: 'Completed' }],
    );
    const result = await startRun(api, options);
    assert.equal(result.outcome, 'started');
    assert.equal(result.runId, 'r10');
    assert.equal(result.runRecord?.id, 'r10');
  });

  it('still fails when the run ends before Loading', async function () {
    await assert.rejects(
      startRun(instrument(['Idle', 'Scheduling', 'Idle']), options),
      /the run ended before it reached Loading/,
    );
  });
});
