import { strict as assert } from 'node:assert';

import { PDFDocument } from 'pdf-lib';

import { instrumentDate, isBusy, LhError, parseRunStatus, runStateName } from '../../src/client';
import { filenameOf, loadCompleteBody, runId } from '../../src/client/runs';
import { pauseResumeAbort, useClients } from '../support/client-suite';
import { until } from '../support/until';

describe('client: run state (pure)', function () {
  it('reads a state given as an integer, digits or a name in any case', function () {
    assert.equal(runStateName(0), 'Idle');
    assert.equal(runStateName(9), 'ErrorHandling');
    assert.equal(runStateName('4'), 'Running');
    assert.equal(runStateName('errorhandling'), 'ErrorHandling');
    assert.equal(runStateName('Error_Handling'), 'ErrorHandling');
    assert.equal(runStateName(10), undefined);
    assert.equal(runStateName(2.5), undefined);
    assert.equal(runStateName('Done'), undefined);
    assert.equal(runStateName(null), undefined);
  });

  it('treats 0001- dates, empty and unparsable dates as not set; zone-less dates as UTC', function () {
    assert.equal(instrumentDate('0001-01-01T00:00:00'), null);
    assert.equal(instrumentDate(''), null);
    assert.equal(instrumentDate('soon'), null);
    assert.equal(instrumentDate(undefined), null);
    assert.equal(instrumentDate('2026-03-01T10:00:00'), '2026-03-01T10:00:00.000Z');
    assert.equal(instrumentDate('2026-03-01T10:00:00+01:00'), '2026-03-01T09:00:00.000Z');
  });

  it('parses a PascalCase status with a named state; keeps unknown fields', function () {
    const s = parseRunStatus({
      ProtocolRunState: 'Paused',
      IsRunInProgress: true,
      IsSimulation: false,
      ProtocolId: 3,
      ProtocolName: 'ELISA',
      CurrentStep: 2,
      StartTime: '2026-03-01T10:00:00Z',
      EstimatedEndTime: '0001-01-01T00:00:00',
      Extra: 'kept',
    });
    assert.deepEqual(s, {
      protocolRunState: 'Paused',
      stateCode: 6,
      isRunInProgress: true,
      isSimulation: false,
      protocolId: 3,
      protocolName: 'ELISA',
      currentStep: 2,
      startTime: '2026-03-01T10:00:00.000Z',
      estimatedEndTime: null,
      extra: 'kept',
    });
    assert.equal(isBusy(s), true);
  });

  it('parses an idle camelCase status with an integer state; missing isRunInProgress follows the state', function () {
    const s = parseRunStatus({ protocolRunState: 0, protocolId: 0, protocolName: '' });
    assert.equal(s.protocolRunState, 'Idle');
    assert.equal(s.isRunInProgress, false);
    assert.equal(s.protocolId, null);
    assert.equal(s.protocolName, null);
    assert.equal(isBusy(s), false);
    assert.equal(isBusy(parseRunStatus({ protocolRunState: 3 })), true);
  });

  it('rejects a status without a known state, naming it', function () {
    assert.throws(() => parseRunStatus({ protocolRunState: 12 }), /protocolRunState 12 is not a run state/);
    assert.throws(() => parseRunStatus([]), /not a JSON object/);
  });

  it('builds the load-complete body: empty lists by default, overrides from the payload, protocol and action fixed', function () {
    assert.deepEqual(loadCompleteBody({ protocolId: '4', simulate: true }), {
      residualTips: [],
      barcodes: [],
      liquidVolumes: [],
      protocolId: 4,
      simulate: true,
      loadCompleteAction: 'Run',
    });
    const body = loadCompleteBody({ protocolId: 4, overrides: { barcodes: ['B1'], protocolId: 9 } });
    assert.deepEqual(body.barcodes, ['B1']);
    assert.equal(body.protocolId, 4);
    assert.throws(() => loadCompleteBody({ protocolId: 4, overrides: { barcodes: 'B1' } }), /payload.barcodes must be an array/);
    assert.throws(() => loadCompleteBody({ protocolId: 4, overrides: { loadCompleteAction: 'Cancel' } }), /loadCompleteAction/);
    assert.throws(() => loadCompleteBody({ protocolId: -1 }), /protocolId must be a whole number/);
  });

  it('checks run ids and file names from Content-Disposition', function () {
    assert.equal(runId(12, 'runId', 'x'), '12');
    assert.throws(() => runId('../etc', 'runId', 'x'), /runId must be a run record id/);
    assert.equal(filenameOf('attachment; filename="run-1.pdf"'), 'run-1.pdf');
    assert.equal(filenameOf("attachment; filename*=UTF-8''..%2F..%2Fevil.pdf"), 'evil.pdf');
    assert.equal(filenameOf('inline'), undefined);
  });
});

describe('client: runs against the simulator', function () {
  const suite = useClients({ simulationSpeed: 1000 });

  async function runDemo(): Promise<string> {
    const c = suite.make();
    const created = (await c.runs.createRun({ protocolId: 1, simulate: true })) as { runId: string };
    await until(async () => (await c.runs.status()).protocolRunState === 'Loading', 'Loading');
    await c.runs.loadComplete({ protocolId: 1, simulate: true });
    await until(async () => (await c.runs.status()).protocolRunState === 'Idle', 'Idle');
    return created.runId;
  }

  it('lists, gets and validates protocols', async function () {
    const c = suite.make();
    assert.deepEqual(
      (await c.runs.protocolNames()).map((p) => p.name),
      ['Demo protocol', 'Empty protocol'],
    );
    assert.equal((await c.runs.getProtocol(1, false)).isValid, true);
    assert.deepEqual(await c.runs.validateProtocol('2'), {
      protocolId: 2,
      isValid: false,
      validationErrors: ['The protocol has no steps.'],
    });
    await assert.rejects(c.runs.validateProtocol('x'), /protocolId must be a whole number/);
  });

  it('runs a protocol and reads its record, report PDF and CSV as Buffers', async function () {
    const id = await runDemo();
    const c = suite.make();
    const [record] = await c.runs.listRunData();
    assert.equal(record.id, id);
    assert.equal(record.runResult, 'Completed');
    const pdf = await c.runs.runReport(id);
    assert.ok(Buffer.isBuffer(pdf.data));
    assert.equal(pdf.data.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.equal(pdf.data[10], 0xe2, 'the binary marker survives: bytes, not text');
    await PDFDocument.load(pdf.data);
    assert.equal(pdf.filename, `run-${id}.pdf`);
    const csv = await c.runs.pipettingCsv(id);
    assert.match(csv.data.toString('utf8'), /^Time,Step,StepType/);
    assert.equal(csv.filename, `pipetting-${id}.csv`);
    await assert.rejects(c.runs.runReport('nope'), (err: LhError) => err.statusCode === 404 && err.operation === 'run-report');
  });

  it('downloads files through the session and transport: a revoked token logs in once more, the bytes stay exact', async function () {
    const id = await runDemo();
    const c = suite.make();
    const first = await c.runs.runReport(id);
    const token = await c.session.token();
    // the instrument ends the session (as a logout elsewhere would): the next download meets a 401
    await fetch(`${suite.sim.baseUrl}/api/v1/authenticate`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
    const logins = suite.sim.state.logins;
    const again = await c.runs.runReport(id);
    assert.equal(suite.sim.state.logins, logins + 1, 'one fresh login after the 401');
    assert.ok(again.data.equals(first.data), 'the same bytes');
    const reportRequests = suite.sim.requests.filter((r) => r.path === `/api/v1/run-data/${id}/pdf`);
    assert.deepEqual(
      reportRequests.map((r) => r.status),
      [200, 401, 200],
    );
    assert.equal(reportRequests[2].authorization?.startsWith('Bearer '), true);
  });

  it('a file download follows the transport rules: a 5xx is retried as any GET, a trickled body fails at the deadline', async function () {
    const id = await runDemo();
    const c = suite.make({ retryBaseDelayMs: 1 });
    await c.runs.pipettingCsv(id); // logged in
    suite.sim.setFaults({ statusRate: 1, statusCode: 503 });
    await assert.rejects(
      c.runs.pipettingCsv(id),
      (err: LhError) => err.statusCode === 503 && err.attempts === 3 && err.operation === 'pipetting-csv',
    );
    suite.sim.clearFaults();
    const slow = suite.make({ timeoutMs: 300 });
    await slow.session.token(); // logged in before the fault (a login has a long deadline of its own)
    suite.sim.setFaults({ trickleMs: 50 });
    await assert.rejects(slow.runs.runReport(id), (err: LhError) => err.kind === 'timeout' && err.operation === 'run-report');
    suite.sim.clearFaults();
  });

  it('reads integer and named states alike', async function () {
    const c = suite.make();
    await c.runs.createRun({ protocolId: 1 });
    await until(async () => (await c.runs.status()).protocolRunState === 'Loading', 'Loading (integers)');
    suite.sim.runs.statesAsNames = true;
    const s = await c.runs.status();
    assert.equal(s.protocolRunState, 'Loading');
    assert.equal(s.stateCode, 3);
    assert.equal(await c.runs.globalRunState(), 'Loading');
    await c.runs.abort();
  });

  it('sends create and load-complete once only, under 5xx and connection resets, with a long deadline', async function () {
    const c = suite.make();
    await c.runs.status(); // logged in
    suite.sim.setFaults({ statusRate: 1, statusCode: 503 });
    await assert.rejects(c.runs.createRun({ protocolId: 1 }), (err: LhError) => err.statusCode === 503);
    suite.sim.setFaults({ resetRate: 1 });
    await assert.rejects(c.runs.createRun({ protocolId: 1 }), (err: LhError) => err.kind === 'network');
    const creates = suite.sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create');
    assert.equal(creates.length, 2, 'one request per call, none resent');
    suite.sim.clearFaults();
    await c.runs.createRun({ protocolId: 1 });
    await until(async () => (await c.runs.status()).protocolRunState === 'Loading', 'Loading');
    suite.sim.setFaults({ statusRate: 1 });
    await assert.rejects(c.runs.loadComplete({ protocolId: 1 }));
    assert.equal(suite.sim.requests.filter((r) => r.path === '/api/v1/protocol-run/load-complete').length, 1);
    suite.sim.clearFaults();
  });

  it('pauses, resumes and aborts with PUT and no body', async function () {
    const c = suite.make();
    await c.runs.setSimulationSpeed(100);
    assert.equal(await c.runs.simulationSpeed(), '100', 'as the instrument gives it, as text');
    await pauseResumeAbort(c);
    const sent = suite.sim.requests.filter((r) => /pause|resume|abort/.test(r.path));
    assert.deepEqual(
      sent.map((r) => [r.method, r.body]),
      [
        ['PUT', ''],
        ['PUT', ''],
        ['PUT', ''],
      ],
    );
    await assert.rejects(c.runs.resume(), (err: LhError) => err.statusCode === 409);
    await assert.rejects(c.runs.setSimulationSpeed(0), /simulationSpeed must be a number greater than 0/);
  });
});
