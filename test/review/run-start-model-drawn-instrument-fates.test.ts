/**
 * Review (runs: start), model-based. lh-run's start (startRun, with this Node-RED's real start claims) against a model
 * instrument over drawn sequences of start msgs, some two at once: the same protocol twice, two protocols; replies of
 * create and load-complete lost after the instrument applied them, 5xx that applied nothing, status reads that fail;
 * runs that reach Running, fail their deck check, are aborted while scheduled, finish between two reads (record
 * Completed, or a word not known), or are replaced by another protocol's run (another Node-RED); Stop at loading and a
 * later confirm.
 *
 * Invariants: a start msg sends at most one create and at most one load-complete (never resent); `busy` (LH_BUSY)
 * only where this msg sent nothing; `started` only when this msg's run was running (or completed by its record), of
 * its protocol; `loading` only when its run waits at Loading; a confirm only of a run a start of this Node-RED left
 * there; every failure an LhError with a kind. LH_SEED replays, LH_CASES draws more (default 200).
 */
import assert from 'node:assert/strict';

import {
  LhError,
  parseRunStatus,
  type RunRecordSummary,
  RunStartClaims,
  type RunStateName,
  type RunStatus,
} from '../../src/client';
import { type RunControl, type StartOptions, startRun } from '../../src/nodes/lh-run/start-run';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

type Fate = 'runs' | 'deck-check-fails' | 'aborted-scheduling' | 'completes-at-once' | 'odd-word-at-once' | 'replaced';

interface ModelRun {
  id: string;
  protocolId: number;
  /** the msg whose create made it (-1: another Node-RED's) */
  by: number;
  fate: Fate;
  path: RunStateName[];
  at: number;
  /** whether load-complete was applied to it */
  loaded: boolean;
  everRunning: boolean;
}

class ModelInstrument implements RunControl {
  run?: ModelRun;
  /** a create whose answer was lost: its run shows only after a few reads (the instrument shows Idle meanwhile) */
  pending?: { run: ModelRun; reads: number; sentAt: number };
  /** creates sent while an unanswered create of this Node-RED could still be making its run */
  createsWhilePending = 0;
  now = (): number => 0;
  records: RunRecordSummary[] = [];
  creates = new Map<number, number>();
  loadCompletes = new Map<number, number>();
  /** the msg whose request is being served (set by each start's api wrapper) */
  private seq = 0;

  constructor(private readonly rng: Rng) {}

  private tick(): void {
    if (this.pending && --this.pending.reads <= 0) {
      this.run = this.pending.run;
      this.pending = undefined;
    }
    const run = this.run;
    if (!run) return;
    if (run.at < run.path.length - 1 && (run.path[run.at] !== 'Loading' || run.loaded)) run.at++;
    const state = run.path[run.at];
    if (state === 'Running') run.everRunning = true;
    if (state === 'Idle') this.end(run);
  }

  private end(run: ModelRun): void {
    this.run = undefined;
    const word =
      run.fate === 'odd-word-at-once'
        ? 'Not completed'
        : run.fate === 'deck-check-fails' || run.fate === 'aborted-scheduling'
          ? 'Aborted'
          : 'Completed';
    this.records.unshift({ id: run.id, protocolName: `Protocol ${run.protocolId}`, startTime: undefined, runResult: word });
  }

  private maybeFail(op: string): void {
    if (this.rng.chance(0.05)) throw new LhError(`${op}: connection reset`, { kind: 'network', operation: op });
  }

  async status(): Promise<RunStatus> {
    await Promise.resolve();
    this.tick();
    this.maybeFail('run-status');
    const run = this.run;
    return parseRunStatus({
      protocolRunState: run ? run.path[run.at] : 'Idle',
      protocolId: run ? run.protocolId : 0,
      protocolName: run ? `Protocol ${run.protocolId}` : '',
      isSimulation: true,
    });
  }

  protocolNames(): ReturnType<RunControl['protocolNames']> {
    return Promise.resolve([1, 2].map((id) => ({ protocolId: id, name: `Protocol ${id}` })));
  }

  validateProtocol(id: unknown): ReturnType<RunControl['validateProtocol']> {
    return Promise.resolve({ protocolId: Number(id), isValid: true, validationErrors: [] });
  }

  createFor(msg: number, protocolId: number): Promise<unknown> {
    this.creates.set(msg, (this.creates.get(msg) ?? 0) + 1);
    if (this.pending && this.now() - this.pending.sentAt < 120_000) this.createsWhilePending++;
    const fault = this.rng.weighted({ none: 6, lostAfterApply: 1, refused5xx: 1 });
    if (fault === 'refused5xx' || this.run || this.pending) {
      const status = this.run ? 409 : 500;
      return Promise.reject(new LhError(`create-run: ${status}`, { kind: 'http', operation: 'create-run', statusCode: status }));
    }
    const fate = this.rng.weighted<Fate>({
      runs: 4,
      'deck-check-fails': 1,
      'aborted-scheduling': 1,
      'completes-at-once': 1,
      'odd-word-at-once': 1,
      replaced: 1,
    });
    const path: RunStateName[] =
      fate === 'aborted-scheduling'
        ? ['Scheduling', 'Aborting', 'Idle']
        : fate === 'deck-check-fails'
          ? ['Scheduling', 'Scheduled', 'Loading', 'Aborting', 'Idle']
          : fate === 'runs'
            ? ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Running', 'Running', 'Idle']
            : ['Scheduling', 'Loading', 'Idle'];
    this.seq++;
    const run: ModelRun = { id: `run-${this.seq}`, protocolId, by: msg, fate, path, at: 0, loaded: false, everRunning: false };
    if (fault === 'lostAfterApply') {
      this.pending = { run, reads: this.rng.int(1, 4), sentAt: this.now() };
      return Promise.reject(new LhError('create-run: no answer', { kind: 'timeout', operation: 'create-run' }));
    }
    this.run = run;
    return Promise.resolve({ runId: this.run.id });
  }

  loadCompleteFor(msg: number): Promise<Record<string, unknown>> {
    this.loadCompletes.set(msg, (this.loadCompletes.get(msg) ?? 0) + 1);
    const fault = this.rng.weighted({ none: 6, lostAfterApply: 1, refused5xx: 1 });
    const run = this.run;
    if (fault === 'refused5xx' || !run || run.path[run.at] !== 'Loading') {
      return Promise.reject(new LhError('load-complete: 409', { kind: 'http', operation: 'load-complete', statusCode: 409 }));
    }
    run.loaded = true;
    if (run.fate === 'replaced') {
      // another Node-RED's run of the other protocol takes the instrument between two reads
      this.end(run);
      this.seq++;
      const other = run.protocolId === 1 ? 2 : 1;
      this.run = {
        id: `run-${this.seq}`,
        protocolId: other,
        by: -1,
        fate: 'runs',
        path: ['Running', 'Running', 'Idle'],
        at: 0,
        loaded: true,
        everRunning: true,
      };
    }
    if (fault === 'lostAfterApply') {
      return Promise.reject(new LhError('load-complete: no answer', { kind: 'timeout', operation: 'load-complete' }));
    }
    return Promise.resolve({});
  }

  // RunControl's own create and load-complete are never called: each start goes through its wrapper (msg known)
  createRun(): Promise<unknown> {
    return Promise.reject(new Error('use createFor'));
  }
  loadComplete(): Promise<Record<string, unknown>> {
    return Promise.reject(new Error('use loadCompleteFor'));
  }
  loadInstructions(): Promise<unknown> {
    return Promise.resolve([]);
  }
  async listRunData(): Promise<RunRecordSummary[]> {
    await Promise.resolve();
    this.maybeFail('list-run-data');
    return [...this.records];
  }
}

function apiFor(model: ModelInstrument, msg: number): RunControl {
  return {
    status: () => model.status(),
    protocolNames: () => model.protocolNames(),
    validateProtocol: (id) => model.validateProtocol(id),
    createRun: (o) => model.createFor(msg, Number(o.protocolId)),
    loadInstructions: () => model.loadInstructions(),
    loadComplete: () => model.loadCompleteFor(msg),
    listRunData: () => model.listRunData(),
  };
}

async function check(seed: number): Promise<void> {
  const rng = new Rng(seed);
  const model = new ModelInstrument(rng);
  let clock = Date.parse('2026-03-01T10:00:00Z');
  const claims = new RunStartClaims(() => clock);
  model.now = () => clock;
  const log: string[] = [];
  const where = (): string => `LH_SEED=${seed}; ${log.join(' | ')}`;
  let msg = 0;

  const start = async (id: number, confirm: boolean): Promise<void> => {
    const protocolId = rng.int(1, 2);
    const stopAtLoading = !confirm && rng.chance(0.3);
    const left = claims.atLoading();
    const options: StartOptions = {
      protocol: confirm ? undefined : { id: protocolId },
      simulate: true,
      stopAtLoading,
      confirmLoading: confirm,
      pollMs: 1000,
      timeoutMs: 20_000,
      sleep: (ms) => {
        clock += ms;
        return Promise.resolve();
      },
      claim: (what) => claims.claim(what, 'start-run'),
      loadingMemory: {
        get: () => claims.atLoading(),
        set: (p, r) => claims.leftAtLoading(p, r),
        forget: () => claims.forgetLoading(),
      },
    };
    const runBefore = model.run;
    let result: Awaited<ReturnType<typeof startRun>> | undefined;
    let failure: unknown;
    try {
      result = await startRun(apiFor(model, id), options);
    } catch (err) {
      failure = err;
    }
    const name = `#${id}${confirm ? ' confirm' : ` p${protocolId}`}`;
    if (result) {
      log.push(`${name}: ${result.outcome} ${result.runId ?? ''}`);
      const mine = result.runId ?? (confirm ? runBefore?.id : undefined);
      const run = model.run?.id === mine ? model.run : undefined;
      if (result.outcome === 'loading') {
        assert.ok(run && run.path[run.at] === 'Loading' && run.by === id, `loading, not at Loading — ${where()}`);
      } else {
        const record = model.records.find((r) => r.id === (result.runId ?? result.runRecord?.id));
        const ran = (run && run.everRunning && run.protocolId === result.protocolId) || record?.runResult === 'Completed';
        assert.ok(ran, `started, but its run was not seen running nor completed — ${where()}`);
      }
      if (confirm) assert.ok(left && runBefore && runBefore.by >= 0, `a confirm of a run no start left at Loading — ${where()}`);
    } else {
      assert.ok(failure instanceof LhError, `not an LhError: ${String(failure)} — ${where()}`);
      log.push(`${name}: ${failure.kind} ${failure.message.slice(0, 60)}`);
      if (failure.kind === 'busy') {
        assert.equal(model.creates.get(id) ?? 0, 0, `busy after a create was sent — ${where()}`);
        assert.equal(model.loadCompletes.get(id) ?? 0, 0, `busy after a load-complete was sent — ${where()}`);
      }
    }
    assert.equal(model.createsWhilePending, 0, `a create sent while an unanswered one may still make its run — ${where()}`);
    assert.ok((model.creates.get(id) ?? 0) <= 1, `two creates for one msg — ${where()}`);
    assert.ok((model.loadCompletes.get(id) ?? 0) <= 1, `two load-completes for one msg — ${where()}`);
  };

  for (let step = rng.int(2, 8); step > 0; step--) {
    const action = rng.weighted({ one: 5, two: 2, confirm: 2, wait: 2 });
    if (action === 'wait') {
      for (let k = rng.int(1, 6); k > 0; k--) await model.status().catch(() => undefined);
      clock += rng.int(1, 200) * 1000;
      log.push('wait');
    } else if (action === 'two') {
      await Promise.all([start(++msg, false), start(++msg, false)]);
    } else {
      await start(++msg, action === 'confirm');
    }
  }
}

describe('lh-run start over drawn instrument fates (review, model-based)', function () {
  it(`a msg creates at most one run, started only when its run ran, busy only when nothing was sent (seed ${SEED}, ${CASES} cases)`, async function () {
    for (let k = 0; k < CASES; k++) await check((SEED + k) % 2_147_483_647);
  });
});
