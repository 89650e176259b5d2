import { strict as assert } from 'node:assert';

import { WebSocket } from 'ws';

import { eventFromFrame, InstrumentEvent } from '../../src/client/event-frames';
import { until } from '../support/until';
import { Harness, startHarness } from './helpers';

type Data = Record<string, unknown>;

/** A raw client of `instinctevents` that keeps every frame, unwrapped the way the package's client does it. */
async function listen(h: Harness): Promise<{ ws: WebSocket; events: InstrumentEvent[]; raw: string[] }> {
  const ws = new WebSocket(`${h.sim.baseUrl.replace(/^http/, 'ws')}/instinctevents`);
  const events: InstrumentEvent[] = [];
  const raw: string[] = [];
  ws.on('message', (data: Buffer) => {
    raw.push(data.toString('utf8'));
    events.push(eventFromFrame(data));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, events, raw };
}

const of = (events: InstrumentEvent[], code: string): Data[] => events.filter((e) => e.code === code).map((e) => e.data as Data);

describe('simulator: run events pushed on instinctevents', function () {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listen>> | undefined;

  before(async function () {
    h = await startHarness({ prefix: '/NimbusLite', simulationSpeed: 100 });
  });
  afterEach(async function () {
    if (client) {
      const closed = new Promise((r) => client!.ws.once('close', r));
      client.ws.terminate();
      await closed;
      client = undefined;
    }
    h.sim.reset();
  });
  after(async function () {
    await h.close();
  });

  /** A protocol of two enabled steps of 4 simulated seconds each (40 ms at speed 100). */
  function twoSteps(): number {
    const id = h.sim.addProtocol('Pushed');
    const steps = h.sim.state.protocols.get(id)!.steps;
    steps.push({ stepType: 'PauseStep', id: 950, name: 'Wait', stepOrder: 1, disabled: false, duration: 4 });
    steps.push({ stepType: 'PauseStep', id: 951, name: 'Wait more', stepOrder: 2, disabled: false, duration: 4 });
    return id;
  }

  it('pushes RunStatus on every state change, TimeRemaining per step, and Finished once with the result and record id', async function () {
    client = await listen(h);
    const id = twoSteps();
    h.sim.runs.create({ protocolId: id, simulate: true }, 'admin');
    await until(() => h.sim.runs.state === 'Loading', 'Loading');
    h.sim.runs.loadComplete({ protocolId: id });
    await until(() => of(client!.events, 'finished').length === 1, 'the Finished event');

    // the wire form: PascalCase with Data as JSON inside a string, as the instrument sends it
    const first = JSON.parse(client.raw[0]) as Data;
    assert.equal(first.Code, 'RunStatus');
    assert.equal(typeof first.Data, 'string');

    const statuses = of(client.events, 'runstatus');
    assert.deepEqual(
      statuses.map((s) => s.protocolRunState),
      [1, 2, 3, 4, 0], // Scheduling, Scheduled, Loading, Running, Idle: integers by default
    );
    assert.deepEqual(
      statuses.map((s) => s.protocolRunState),
      h.sim.runs.transitions.map((t) => ['Idle', 'Scheduling', 'Scheduled', 'Loading', 'Running'].indexOf(t.state)),
      'one RunStatus per transition the run state machine made',
    );
    const running = statuses[3];
    assert.equal(running.protocolId, id);
    assert.equal(running.protocolName, 'Pushed');
    assert.equal(running.currentStep, 'Wait');
    assert.equal(running.isRunInProgress, true);
    assert.equal(statuses[4].isRunInProgress, false);

    const remaining = of(client.events, 'timeremaining');
    assert.deepEqual(
      remaining.map((r) => r.currentStep),
      ['Wait', 'Wait more'],
      'one TimeRemaining as each step starts',
    );
    assert.ok((remaining[0].timeRemaining as number) > (remaining[1].timeRemaining as number));
    assert.ok(Math.abs((remaining[0].timeRemaining as number) - 0.08) < 0.02, `${String(remaining[0].timeRemaining)} s`);

    const [finished] = of(client.events, 'finished');
    const [record] = h.sim.runs.records.all;
    assert.equal(finished.result, 'Completed');
    assert.equal(finished.runRecordId, record.id);
    assert.equal(finished.protocolName, 'Pushed');
    // Finished follows the Idle status: a listener that polls on Finished finds the record listed
    const codes = client.events.map((e) => e.code);
    assert.equal(codes.lastIndexOf('finished'), codes.length - 1);
    assert.equal(codes[codes.length - 2], 'runstatus');
  });

  it('serves the pushed state as a name when the simulator serves names, and pushes an abort as Aborting then Finished Aborted', async function () {
    h.sim.configureRuns({ statesAsNames: true, simulationSpeed: 100 });
    client = await listen(h);
    const id = twoSteps();
    h.sim.runs.create({ protocolId: id }, 'admin');
    await until(() => h.sim.runs.state === 'Loading', 'Loading');
    h.sim.runs.loadComplete({ protocolId: id });
    await until(() => of(client!.events, 'runstatus').some((s) => s.protocolRunState === 'Running'), 'Running pushed');
    h.sim.runs.abort();
    await until(() => of(client!.events, 'finished').length === 1, 'the Finished event');
    assert.deepEqual(
      of(client.events, 'runstatus').map((s) => s.protocolRunState),
      ['Scheduling', 'Scheduled', 'Loading', 'Running', 'Aborting', 'Idle'],
    );
    const [finished] = of(client.events, 'finished');
    assert.equal(finished.result, 'Aborted');
    assert.equal(finished.runRecordId, h.sim.runs.records.all[0].id);
  });

  it('pushes ErrorHandling when a run error is raised and Running when it is answered Retry', async function () {
    client = await listen(h);
    const id = twoSteps();
    h.sim.runs.create({ protocolId: id }, 'admin');
    await until(() => h.sim.runs.state === 'Loading', 'Loading');
    h.sim.injectRunError({ atStep: 2, responses: ['Retry', 'Abort'] });
    h.sim.runs.loadComplete({ protocolId: id });
    await until(() => h.sim.runs.state === 'ErrorHandling', 'ErrorHandling');
    await until(() => of(client!.events, 'runstatus').some((s) => s.protocolRunState === 9), 'ErrorHandling pushed');
    h.sim.resolvePendingError(h.sim.state.pendingErrors[0].id); // answered on the instrument with its first response
    await until(() => of(client!.events, 'finished').length === 1, 'the Finished event');
    assert.deepEqual(
      of(client.events, 'runstatus').map((s) => s.protocolRunState),
      [1, 2, 3, 4, 9, 4, 0],
    );
    assert.equal(of(client.events, 'finished')[0].result, 'Completed');
  });

  it('a run cancelled at Loading ends with Finished Cancelled and no record id', async function () {
    client = await listen(h);
    const id = twoSteps();
    h.sim.runs.create({ protocolId: id }, 'admin');
    await until(() => h.sim.runs.state === 'Loading', 'Loading');
    h.sim.runs.cleanupUnloading();
    await until(() => of(client!.events, 'finished').length === 1, 'the Finished event');
    const [finished] = of(client.events, 'finished');
    assert.equal(finished.result, 'Cancelled');
    assert.equal(finished.runRecordId, null);
    assert.equal(h.sim.runs.records.all.length, 0);
  });
});
