import { strict as assert } from 'node:assert';

import { PDFDocument } from 'pdf-lib';

import { type RunClock, RunMachine } from '../../src/simulator/run-machine';
import { RuntimeErrorBook } from '../../src/simulator/runtime-errors';
import { StepStore } from '../../src/simulator/steps';
import { until } from '../support/until';
import { bearer, describeStatus, JSON_TYPE, problemOf, useLoggedInHarness } from './helpers';

type Obj = Record<string, unknown>;

describe('simulator: protocol runs and run records', function () {
  const h = useLoggedInHarness({ simulationSpeed: 1000 });

  const get = async (path: string): Promise<unknown> => {
    const res = await h.a.get(`/api/v1${path}`, bearer(h.token));
    assert.equal(res.status, 200, describeStatus(res));
    return res.data;
  };
  const put = (path: string, body?: unknown) =>
    h.a.put(`/api/v1${path}`, body, bearer(h.token, body === undefined ? undefined : JSON_TYPE));
  const create = (body: unknown) => h.a.post('/api/v1/protocol-run/create', body, bearer(h.token, JSON_TYPE));
  const status = async (): Promise<Obj> => (await get('/protocol-run')) as Obj;
  const waitState = (state: number | string) => until(async () => (await status()).protocolRunState === state, `state ${state}`);

  async function startDemo(): Promise<string> {
    const res = await create({ protocolId: 1, simulate: true, recompile: false });
    assert.equal(res.status, 200, describeStatus(res));
    await waitState(3);
    const done = await put('/protocol-run/load-complete', {
      protocolId: 1,
      simulate: true,
      loadCompleteAction: 'Run',
      residualTips: [],
      barcodes: [],
      liquidVolumes: [],
    });
    assert.equal(done.status, 204, describeStatus(done));
    return (res.data as Obj).runId as string;
  }

  it('lists protocol names, gets one with or without step data, validates', async function () {
    assert.deepEqual(await get('/protocols/names'), [
      { protocolId: 1, name: 'Demo protocol', isVisible: true },
      { protocolId: 2, name: 'Empty protocol', isVisible: true },
    ]);
    const full = (await get('/protocols/1')) as Obj;
    assert.equal(full.isValid, true);
    assert.equal((full.steps as Obj[])[2].rpm, 800);
    const bare = (await get('/protocols/1?includeFullStepData=false')) as Obj;
    assert.equal((bare.steps as Obj[])[2].rpm, undefined);
    assert.deepEqual(await get('/protocols/validate/2'), {
      protocolId: 2,
      isValid: false,
      validationErrors: ['The protocol has no steps.'],
    });
    assert.equal((await h.a.get('/api/v1/protocols/9', bearer(h.token))).status, 404);
  });

  it('runs a protocol: Scheduling, Loading with load instructions, Running step by step, Idle with a run record', async function () {
    const idle = await status();
    assert.equal(idle.protocolRunState, 0);
    assert.equal(idle.isRunInProgress, false);
    assert.equal(idle.startTime, '0001-01-01T00:00:00');
    const res = await create({ protocolId: 1, simulate: true });
    assert.equal(res.status, 200, describeStatus(res));
    assert.equal((res.data as Obj).protocolRunState, 1);
    await waitState(3);
    const instructions = (await get('/protocol-run/load-instructions')) as Obj[];
    assert.ok(instructions.some((i) => i.position === 'HeaterShaker1'));
    assert.equal(
      (await put('/protocol-run/load-complete', { protocolId: 1, simulate: true, loadCompleteAction: 'Run' })).status,
      204,
    );
    const running = await status();
    assert.equal(running.protocolRunState, 4);
    assert.equal(running.protocolName, 'Demo protocol');
    // at 1,000 simulated seconds per second the run may be past its first step when the status is read (a busy
    // machine): a step of this protocol, whichever
    assert.ok(
      ['Pause for plate check', 'Add buffer', 'Incubate'].includes(String(running.currentStep)),
      `current step ${String(running.currentStep)}`,
    );
    assert.equal(running.isSimulation, true);
    const start = Date.parse(String(running.startTime));
    const end = Date.parse(String(running.estimatedEndTime));
    assert.ok(end - start > 500 && end - start < 1000, `640 simulated s at speed 1000: ${end - start} ms`);
    await waitState(0);
    const visited = h.sim.runs.transitions.map((t) => t.state);
    assert.deepEqual(visited, ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Idle']);
    const [record] = (await get('/run-data')) as Obj[];
    assert.equal(record.id, (res.data as Obj).runId);
    assert.equal(record.runResult, 'Completed');
    assert.equal(record.userName, 'admin');
    const detail = (await get(`/run-data/${String(record.id)}`)) as Obj;
    assert.deepEqual(
      (detail.steps as Obj[]).map((s) => s.status),
      ['Done', 'Done', 'Done'],
    );
  });

  it('serves the run report as a valid PDF and the pipetting record as CSV', async function () {
    await startDemo();
    await waitState(0);
    const [record] = (await get('/run-data')) as Obj[];
    const pdf = await h.a.get(`/api/v1/run-data/${String(record.id)}/pdf`, { ...bearer(h.token), responseType: 'arraybuffer' });
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    const bytes = Buffer.from(pdf.data as ArrayBuffer);
    assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    const doc = await PDFDocument.load(bytes, { throwOnInvalidObject: true });
    assert.equal(doc.getPageCount(), 1);
    assert.equal(doc.getTitle(), 'Run report Demo protocol');
    // the xref offsets point at the objects
    const text = bytes.toString('latin1');
    const startxref = Number(/startxref\n(\d+)/.exec(text)?.[1]);
    assert.equal(text.slice(startxref, startxref + 4), 'xref');
    const csv = await h.a.get(`/api/v1/run-data/${String(record.id)}/pipetting-csv`, {
      ...bearer(h.token),
      responseType: 'text',
    });
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const lines = String(csv.data).trim().split('\r\n');
    assert.equal(lines[0], 'Time,Step,StepType,Channel,Labware,Wells,VolumeUl,Status');
    assert.match(lines[1], /,Add buffer,AddReagentStep,1,Plate1,A1:H12,50,Done$/);
    assert.equal((await h.a.get('/api/v1/run-data/nope/pdf', bearer(h.token))).status, 404);
  });

  it('serves states as names when asked (PUT /sim/run), as some instruments do', async function () {
    assert.equal((await h.control.put('/run', { statesAsNames: true })).status, 200);
    assert.equal((await status()).protocolRunState, 'Idle');
    assert.equal(await get('/instruments/global-run-state'), 'Idle');
    await create({ protocolId: 1 });
    await waitState('Loading');
  });

  it('pauses (Pausing, Paused), resumes and aborts (Aborting, Idle, record Aborted)', async function () {
    await put('/protocol-run/simulation-speed', { simulationSpeed: 200 });
    assert.deepEqual(await get('/protocol-run/simulation-speed'), { simulationSpeed: 200 });
    await startDemo();
    assert.equal((await put('/protocol-run/pause')).status, 204);
    await waitState(6);
    const step = (await status()).currentStep;
    assert.equal((await put('/protocol-run/pause')).status, 409);
    assert.equal((await put('/protocol-run/resume')).status, 204);
    assert.equal((await status()).protocolRunState, 4);
    assert.equal((await status()).currentStep, step);
    assert.equal((await put('/protocol-run/abort')).status, 204);
    await waitState(0);
    assert.deepEqual(
      h.sim.runs.transitions.map((t) => t.state),
      ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Pausing', 'Paused', 'Running', 'Aborting', 'Idle'],
    );
    const [record] = (await get('/run-data')) as Obj[];
    assert.equal(record.runResult, 'Aborted');
    assert.equal((await put('/protocol-run/resume')).status, 409);
  });

  it('refuses a second run while one is in progress, naming it; refuses invalid protocols', async function () {
    await put('/protocol-run/simulation-speed', { simulationSpeed: 10 });
    await create({ protocolId: 1 });
    const again = await create({ protocolId: 1 });
    assert.equal(again.status, 409);
    assert.match(String(problemOf(again).detail), /Demo protocol/);
    assert.equal((await put('/protocol-run/cleanup-unloading')).status, 409); // still Scheduling
    await waitState(3);
    assert.equal((await put('/protocol-run/cleanup-unloading')).status, 204);
    assert.equal((await status()).protocolRunState, 0);
    const empty = await create({ protocolId: 2 });
    assert.equal(empty.status, 400);
    assert.match(String(problemOf(empty).detail), /no steps/);
    const bad = await create({ protocolId: 'one' });
    assert.equal(bad.status, 400);
    assert.ok(problemOf(bad).errors?.protocolId);
  });

  it('moves to ErrorHandling on an injected error: Retry resumes and the run completes; Abort fails it', async function () {
    await startDemo();
    const injected = await h.control.post('/run/error', { title: 'Clot detected' });
    assert.equal(injected.status, 201, describeStatus(injected));
    const error = (injected.data as { error: Obj }).error;
    assert.equal((await status()).protocolRunState, 9);
    const [pending] = (await get('/errors/check-for-pending-errors')) as Obj[];
    assert.equal(pending.id, error.id);
    assert.deepEqual(pending.errorResponses, [{ response: 'Retry' }, { response: 'Abort' }]);
    const answer = await put('/errors/runtime', { id: error.id, selectedResponse: 'Retry', errorData: [] });
    assert.equal(answer.status, 204);
    assert.equal((await status()).protocolRunState, 4);
    await waitState(0);
    assert.equal(((await get('/run-data')) as Obj[])[0].runResult, 'Completed');

    await startDemo();
    const second = (await h.control.post('/run/error', {})).data as { error: Obj };
    await put('/errors/runtime', { id: second.error.id, selectedResponse: 'Abort', errorData: [] });
    await waitState(0);
    assert.deepEqual(
      h.sim.runs.transitions.slice(-3).map((t) => t.state),
      ['ErrorHandling', 'Aborting', 'Idle'],
    );
    const [failed] = (await get('/run-data')) as Obj[];
    assert.equal(failed.runResult, 'Failed');
    const detail = (await get(`/run-data/${String(failed.id)}`)) as Obj;
    assert.deepEqual(
      (detail.errors as Obj[]).map((e) => e.selectedResponse),
      ['Abort'],
    );
  });

  it('raises an armed error when its step starts', async function () {
    await create({ protocolId: 1 });
    assert.deepEqual((await h.control.post('/run/error', { atStep: 2 })).data, { armed: true });
    await waitState(3);
    await put('/protocol-run/load-complete', { protocolId: 1 });
    await waitState(9);
    assert.equal((await status()).currentStep, 'Add buffer');
    assert.equal((await h.control.post('/run/error', { atStep: 7 })).status, 400);
  });

  it('checks load-complete: only in Loading, for the protocol being loaded', async function () {
    assert.equal((await put('/protocol-run/load-complete', { protocolId: 1 })).status, 409);
    await create({ protocolId: 1 });
    await waitState(3);
    const wrong = await put('/protocol-run/load-complete', { protocolId: 2 });
    assert.equal(wrong.status, 400);
    const badList = await put('/protocol-run/load-complete', { protocolId: 1, barcodes: 'x' });
    assert.equal(badList.status, 400);
    assert.equal((await status()).protocolRunState, 3);
  });

  it('a restart of the simulator (stop clears the timers, start plans them again) carries the run on', async function () {
    await startDemo();
    await h.sim.restart();
    assert.equal(h.sim.runs.state, 'Running');
    await waitState(0);
  });
  it('PUT /sim/run {endNext} scripts the next run; a bad spec is a 400 naming the field', async function () {
    assert.equal((await h.control.put('/run', { endNext: { at: 'scheduling' } })).status, 200);
    assert.equal((await create({ protocolId: 1 })).status, 200);
    await until(() => h.sim.runs.transitions.some((t) => t.state === 'Aborting'), 'Aborting');
    const bad = await h.control.put('/run', { endNext: { at: 'end', result: 3 } });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.data), /endNext.result must be text/);
  });
});

describe('simulator: run state machine on a manual clock', function () {
  /** A clock the test moves by hand: timers fire only in advance(). */
  function manualClock(): RunClock & { advance(ms: number): void } {
    let now = Date.parse('2026-03-01T10:00:00Z');
    let timers: { at: number; fn: () => void }[] = [];
    return {
      now: () => now,
      schedule(ms, fn) {
        const timer = { at: now + ms, fn };
        timers.push(timer);
        return () => {
          timers = timers.filter((t) => t !== timer);
        };
      },
      advance(ms) {
        const end = now + ms;
        for (;;) {
          const next = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
          if (!next) break;
          timers = timers.filter((t) => t !== next);
          now = next.at;
          next.fn();
        }
        now = end;
      },
    };
  }

  function machine(): { runs: RunMachine; clock: ReturnType<typeof manualClock>; errors: RuntimeErrorBook } {
    const clock = manualClock();
    const steps = new StepStore();
    steps.seed(); // Demo protocol: 30 s, 10 s, 600 s
    const errors = new RuntimeErrorBook();
    const runs = new RunMachine({ clock, steps, errors, speed: 10, statesAsNames: true });
    errors.onHandled = (e) => runs.errorHandled(e);
    return { runs, clock, errors };
  }

  it('takes simulated time divided by the speed, and pausing freezes the step', function () {
    const { runs, clock } = machine();
    runs.create({ protocolId: 1 }, 'admin');
    clock.advance(199);
    assert.equal(runs.state, 'Scheduling');
    clock.advance(101); // 2 s + 1 s simulated at speed 10
    assert.equal(runs.state, 'Loading');
    runs.loadComplete({ protocolId: 1 });
    const start = clock.now();
    assert.equal(Date.parse(runs.status().estimatedEndTime) - start, 64_000);
    clock.advance(3000); // the 30 s pause step
    assert.equal(runs.status().currentStep, 'Add buffer');
    clock.advance(500);
    runs.pause();
    clock.advance(200);
    assert.equal(runs.state, 'Paused');
    clock.advance(3_600_000);
    assert.equal(runs.status().currentStep, 'Add buffer');
    runs.resume();
    clock.advance(500 + 60_000);
    assert.equal(runs.state, 'Idle');
    assert.equal(runs.records.all[0].runResult, 'Completed');
  });

  it('a run error waits in ErrorHandling however long; Abort fails the run', function () {
    const { runs, clock, errors } = machine();
    runs.create({ protocolId: 1 }, 'admin');
    clock.advance(300);
    runs.loadComplete({ protocolId: 1 });
    const { error } = runs.injectError({});
    clock.advance(86_400_000);
    assert.equal(runs.state, 'ErrorHandling');
    errors.answer({ id: error!.id, selectedResponse: 'Abort', errorData: [] });
    assert.equal(runs.state, 'Aborting');
    clock.advance(300);
    assert.equal(runs.records.all[0].runResult, 'Failed');
  });

  it('scripted endings (endNext): aborted while Scheduling, aborted at the deck check, or a record in any words', function () {
    const { runs, clock } = machine();
    const states = (): string[] => runs.transitions.map((t) => t.state);
    runs.endNext({ at: 'scheduling' });
    runs.create({ protocolId: 1 }, 'admin');
    clock.advance(1000);
    assert.deepEqual(states(), ['Scheduling', 'Aborting', 'Idle']);
    assert.equal(runs.records.all.length, 0, 'a run aborted before it started has no record');

    runs.transitions.length = 0;
    runs.endNext({ at: 'deck-check', result: 'Aborted' });
    runs.create({ protocolId: 1 }, 'admin');
    clock.advance(300);
    runs.loadComplete({ protocolId: 1 });
    clock.advance(300);
    assert.deepEqual(states(), ['Scheduling', 'Scheduled', 'Loading', 'Aborting', 'Idle']);
    assert.equal(runs.records.all[0].runResult, 'Aborted');

    runs.endNext({ at: 'end', result: 'Not completed' });
    runs.create({ protocolId: 1 }, 'admin');
    clock.advance(300);
    runs.loadComplete({ protocolId: 1 });
    clock.advance(70_000);
    assert.equal(runs.state, 'Idle');
    assert.equal(runs.records.all.find((r) => r.runResult !== 'Aborted')?.runResult, 'Not completed');

    runs.create({ protocolId: 1 }, 'admin'); // the scripts are used up: a normal run
    clock.advance(300);
    runs.loadComplete({ protocolId: 1 });
    clock.advance(70_000);
    assert.equal(runs.records.all.filter((r) => r.runResult === 'Completed').length, 1);
    assert.throws(() => runs.endNext({ at: 'later' }), /endNext.at must be 'scheduling', 'deck-check' or 'end'/);
  });
});
