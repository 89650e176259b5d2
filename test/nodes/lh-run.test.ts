import assert from 'node:assert/strict';

import { helper } from '../support/runtime';
import { until } from '../support/until';
import { useRunNode } from './lh-run.support';

type Msg = Record<string, unknown>;

describe('lh-run', function () {
  const { sim, load, run, runFailing } = useRunNode();

  const paths = (): string[] =>
    sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate')).map((r) => `${r.method} ${r.path}`);
  const creates = (): number => sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create').length;

  describe('start', function () {
    it('validates, creates, confirms loading and outputs the status of the running run', async function () {
      sim.runs.setSpeed(100); // the demo runs 6.4 s: still running when the node answers
      const msg = await run({ operation: 'start', protocolId: '1', simulate: 'true' }, { topic: 'keep' });
      const status = msg.payload as Msg;
      assert.equal(msg.outcome, 'started');
      assert.equal(msg.state, 'Running');
      assert.equal(status.protocolRunState, 'Running');
      assert.equal(status.protocolName, 'Demo protocol');
      assert.equal(status.isSimulation, true);
      assert.equal(msg.protocolId, 1);
      assert.equal(msg.topic, 'keep');
      assert.equal(typeof msg.runId, 'string');
      const sent = paths();
      const readiness = [
        'GET /api/v1/system-ready',
        'GET /api/v1/instruments/connection-status',
        'GET /api/v1/service-software-api/sensor-status',
      ];
      assert.deepEqual(sent.filter((p) => !readiness.includes(p)).slice(0, 3), [
        'GET /api/v1/protocol-run',
        'GET /api/v1/protocols/validate/1',
        'POST /api/v1/protocol-run/create',
      ]);
      for (const read of readiness) assert.ok(sent.indexOf(read) < sent.indexOf('POST /api/v1/protocol-run/create'), read);
      assert.ok(sent.indexOf('PUT /api/v1/protocol-run/load-complete') > 3);
      const create = sim.requests.find((r) => r.path === '/api/v1/protocol-run/create');
      assert.deepEqual(create?.body, { protocolId: 1, simulate: true, recompile: false });
      const loadComplete = sim.requests.find((r) => r.path === '/api/v1/protocol-run/load-complete');
      assert.deepEqual(loadComplete?.body, {
        residualTips: [],
        barcodes: [],
        liquidVolumes: [],
        protocolId: 1,
        simulate: true,
        loadCompleteAction: 'Run',
      });
    });

    it('takes the protocol by name from msg.protocolName and simulate and load lists from the msg', async function () {
      const msg = await run(
        { operation: 'msg' },
        { operation: 'start', protocolName: 'demo protocol', simulate: true, payload: { barcodes: ['P1'], protocol: 'x' } },
      );
      assert.equal(msg.protocolId, 1);
      const loadComplete = sim.requests.find((r) => r.path === '/api/v1/protocol-run/load-complete');
      assert.deepEqual((loadComplete?.body as Msg).barcodes, ['P1']);
      assert.equal((loadComplete?.body as Msg).protocol, undefined, 'other payload fields are not sent');
    });

    it('fails clearly for an unknown or ambiguous protocol name and for an invalid protocol, sending no create', async function () {
      let error = await runFailing({ operation: 'start' }, { protocolName: 'ELISA' });
      assert.equal(error.field, 'protocolName');
      assert.match(
        String(error.message),
        /"ELISA" is not a protocol of the instrument; it has "Demo protocol" \(1\), "Empty protocol" \(2\)/,
      );
      await helper.unload();
      sim.addProtocol('Demo protocol');
      error = await runFailing({ operation: 'start' }, { protocolName: 'Demo protocol' });
      assert.match(String(error.message), /ambiguous: protocols 1, 3/);
      await helper.unload();
      error = await runFailing({ operation: 'start', protocolId: '2' }, {});
      assert.equal(error.field, 'protocolId');
      assert.match(String(error.message), /protocol 2 is not valid: The protocol has no steps/);
      await helper.unload();
      error = await runFailing({ operation: 'start' }, {});
      assert.match(String(error.message), /a protocol is required/);
      await helper.unload();
      error = await runFailing({ operation: 'start', protocolId: '1', simulate: 'msg' }, { simulate: 'yes' });
      assert.equal(error.field, 'simulate');
      assert.equal(creates(), 0);
    });

    it('refuses a start while a run is in progress, naming the running protocol, before anything is sent', async function () {
      sim.runs.setSpeed(1);
      const node = await load({ operation: 'start', protocolId: '1' });
      sim.runs.create({ protocolId: 1 }, 'someone else'); // started elsewhere: waits at Scheduling (2 s at speed 1)
      sim.clearRequests();
      const refused = await node.runFailing({});
      const details = refused._error as Msg;
      assert.match(
        String(details.message),
        /start refused: a run of protocol 'Demo protocol' \(1\) is in progress \(Scheduling\)/,
      );
      assert.equal(details.statusCode, 409);
      assert.equal(details.kind, 'busy');
      // only the refusal's status read: no validate, no create
      assert.deepEqual(paths(), ['GET /api/v1/protocol-run']);
      sim.runs.abort();
    });

    it('stops at Loading for an operator with the load instructions; a start with msg.confirmLoading continues', async function () {
      const node = await load({ operation: 'start', protocolId: '1', stopAtLoading: true });
      const loading = await node.run({});
      assert.equal(loading.outcome, 'loading');
      assert.equal(loading.state, 'Loading');
      assert.ok((loading.payload as Msg[]).some((i) => i.position === 'HeaterShaker1'));
      assert.equal(sim.runs.state, 'Loading');
      const started = await node.run({ confirmLoading: true });
      assert.equal(started.outcome, 'started');
      assert.notEqual(sim.runs.state, 'Loading');
      assert.equal(creates(), 1);
      const none = await node.runFailing({ confirmLoading: true });
      assert.match(String((none._error as Msg).message), /no run is waiting at Loading/);
    });

    it('never sends create twice: a 5xx or a reset on create fails to Catch', async function () {
      sim.runs.failNextCreates({ status: 503 });
      let error = await runFailing({ operation: 'start', protocolId: '1' }, {});
      assert.equal(error.statusCode, 503);
      assert.equal(error.operation, 'create-run');
      assert.equal(creates(), 1);
      await helper.unload();
      sim.runs.failNextCreates({ reset: true });
      error = await runFailing({ operation: 'start', protocolId: '1' }, {});
      assert.equal(error.kind, 'network');
      assert.equal(creates(), 2);
      assert.equal(sim.runs.state, 'Idle');
    });
  });

  describe('control', function () {
    it('pauses, resumes and aborts (abort only when asked), each answering with the status', async function () {
      sim.runs.setSpeed(50);
      const node = await load({ operation: 'msg' });
      await node.run({ operation: 'start', protocolId: 1 });
      const paused = await node.run({ operation: 'pause' });
      assert.ok(['Pausing', 'Paused'].includes(String(paused.state)));
      await until(() => sim.runs.state === 'Paused', 'Paused');
      const resumed = await node.run({ operation: 'resume' });
      assert.equal(resumed.state, 'Running');
      const status = await node.run({ operation: 'status' });
      assert.equal(status.state, 'Running');
      assert.equal(sim.requests.filter((r) => r.path.endsWith('/abort')).length, 0);
      const aborted = await node.run({ operation: 'abort' });
      assert.ok(['Aborting', 'Idle'].includes(String(aborted.state)));
      await until(() => sim.runs.state === 'Idle', 'Idle');
      assert.equal(sim.runs.records.all[0].runResult, 'Aborted');
      const failed = await node.runFailing({ operation: 'resume' });
      assert.equal((failed._error as Msg).statusCode, 409);
    });

    it('lists protocols and validates one by name', async function () {
      const node = await load({ operation: 'msg' });
      const list = await node.run({ operation: 'protocols' });
      assert.deepEqual(
        (list.payload as Msg[]).map((p) => p.protocolId),
        [1, 2],
      );
      const valid = await node.run({ operation: 'validate', protocolName: 'Empty protocol' });
      assert.equal(valid.isValid, false);
      assert.deepEqual((valid.payload as Msg).validationErrors, ['The protocol has no steps.']);
    });

    it('rejects an unknown operation and sends nothing', async function () {
      const error = await runFailing({ operation: 'msg' }, { operation: 'stop' });
      assert.equal(error.field, 'operation');
      assert.match(String(error.message), /must be one of start, pause, resume, abort, cleanup, status, protocols, validate/);
      assert.equal(sim.requests.length, 0);
    });
  });
});
