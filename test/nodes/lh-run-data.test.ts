import assert from 'node:assert/strict';

import { PDFDocument } from 'pdf-lib';

import { configuredNode, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-run-data', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 } });
  const { load, run, runFailing } = configuredNode(
    sim,
    { id: 'data', type: 'lh-run-data' },
    { only: ['lh-server', 'lh-run-data'] },
  );

  async function finishedRun(): Promise<string> {
    sim.runs.create({ protocolId: 1, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading');
    sim.runs.loadComplete({ protocolId: 1 });
    await until(() => sim.runs.state === 'Idle', 'Idle');
    return sim.runs.records.all[sim.runs.records.all.length - 1].id;
  }

  it('outputs the run report as a PDF Buffer with msg.filename, ready for an e-mail or file node', async function () {
    const id = await finishedRun();
    const msg = await run({ operation: 'report' }, { runId: id, topic: 'report' });
    const pdf = msg.payload as Buffer;
    assert.ok(Buffer.isBuffer(pdf));
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    const doc = await PDFDocument.load(pdf);
    assert.equal(doc.getPageCount(), 1);
    assert.equal(msg.filename, `run-${id}.pdf`);
    assert.equal(msg.contentType, 'application/pdf');
    assert.equal(msg.runId, id);
    assert.equal(msg.topic, 'report');
  });

  it('outputs the pipetting record as a CSV Buffer with msg.filename', async function () {
    const id = await finishedRun();
    const msg = await run({ operation: 'pipetting-csv', runId: id, runIdType: 'str' }, {});
    assert.ok(Buffer.isBuffer(msg.payload));
    const rows = (msg.payload as Buffer)
      .toString('utf8')
      .trim()
      .split('\r\n')
      .map((r) => r.split(','));
    assert.deepEqual(rows[0], ['Time', 'Step', 'StepType', 'Channel', 'Labware', 'Wells', 'VolumeUl', 'Status']);
    assert.ok(rows.slice(1).every((r) => r.length === rows[0].length));
    assert.equal(msg.filename, `pipetting-${id}.csv`);
    assert.equal(msg.contentType, 'text/csv');
  });

  it('lists run records newest first and gets one', async function () {
    const first = await finishedRun();
    const second = await finishedRun();
    const node = await load({ operation: 'msg' });
    const list = await node.run({ operation: 'list' });
    assert.deepEqual(
      (list.payload as Msg[]).map((r) => r.id),
      [second, first],
    );
    const one = await node.run({ operation: 'get', runId: first });
    assert.equal((one.payload as Msg).runResult, 'Completed');
    const machine = one.machine as Msg;
    assert.equal(machine.serialNumber, 'SIM-0001', 'the record names the instrument it ran on');
    assert.deepEqual((machine.softwareVersions as Msg[])[0], { name: 'Preparation service', version: '3.4.0' });
    sim.configureMachine({ offered: false });
    const unlabelled = await node.run({ operation: 'get', runId: first });
    assert.equal((unlabelled.payload as Msg).runResult, 'Completed', 'an instrument that tells no name still gives the record');
    assert.equal(unlabelled.machine, undefined);
  });

  it('needs a valid run id and sends nothing without one; 404 for an unknown record', async function () {
    let error = await runFailing({ operation: 'report' }, {});
    assert.equal(error.field, 'runId');
    assert.match(String(error.message), /runId is required/);
    await helper.unload();
    error = await runFailing({ operation: 'report' }, { runId: '../../etc/passwd' });
    assert.equal(error.field, 'runId');
    assert.equal(sim.requests.length, 0);
    await helper.unload();
    error = await runFailing({ operation: 'pipetting-csv' }, { runId: 'missing' });
    assert.equal(error.statusCode, 404);
  });
});
