/**
 * Issue 33: lh-instrument in a real Node-RED runtime against the simulator: each operation, inputs checked before
 * anything is sent, initialise refused during a run, and every write in the audit trail with the node as actor.
 */
import assert from 'node:assert/strict';

import { imageType } from '../../src/client';
import { useAuditDir } from '../audit/chain-support';
import { configuredNode, useInstrument } from '../support/node-suite';
import { helper, runtimeSettings } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const writes = (sim: { requests: { method: string; path: string }[] }): string[] =>
  sim.requests.filter((r) => r.method !== 'GET' && !/authenticate/.test(r.path)).map((r) => `${r.method} ${r.path}`);

describe('lh-instrument', function () {
  const sim = useInstrument();
  const { load, run, runFailing } = configuredNode(
    sim,
    { id: 'inst', type: 'lh-instrument' },
    { only: ['lh-server', 'lh-instrument'] },
  );

  it('snapshot: the PNG in msg.payload, msg.snapshot and msg.attachments for the e-mail node', async function () {
    const msg = await run({ operation: 'snapshot' }, { topic: 'deck' });
    assert.ok(Buffer.isBuffer(msg.payload));
    assert.equal(imageType(msg.payload as Buffer), 'image/png');
    const snap = msg.snapshot as Msg;
    assert.equal(snap.contentType, 'image/png');
    assert.ok(Buffer.isBuffer(snap.content));
    const [att] = msg.attachments as Msg[];
    assert.match(String(att.filename), /^deck-.*\.png$/);
    assert.equal(att.contentType, 'image/png');
    assert.equal(msg.topic, 'deck');
    assert.deepEqual(
      sim.requests.filter((r) => r.path.startsWith('/api/v1/camera')).map((r) => r.path),
      ['/api/v1/camera/true'],
    );
  });

  it('heater: start with msg.temperature, status moves toward it, stop', async function () {
    const node = await load({ operation: 'msg' });
    const started = await node.run({ operation: 'heater-start', temperature: 37 });
    assert.deepEqual(started.payload, { targetTemperature: 37 });
    const status = await node.run({ operation: 'heater-status' });
    assert.equal((status.payload as Msg).targetTemperature, 37);
    await node.run({ operation: 'heater-stop' });
    assert.deepEqual(writes(sim), [
      'PUT /api/v1/thermal-device/hhc/start-temperature-control',
      'PUT /api/v1/thermal-device/hhc/stop-temperature-control',
    ]);
  });

  it('refuses a bad °C, colour or position before sending, naming the field', async function () {
    let error = await runFailing({ operation: 'heater-start', temperature: '150', temperatureType: 'num' }, {});
    assert.equal(error.field, 'temperature');
    assert.match(String(error.message), /from 0 to 105/);
    await helper.unload();
    error = await runFailing({ operation: 'lights-custom' }, { payload: { red: 300, green: 0, blue: 0 } });
    assert.equal(error.field, 'payload.red');
    await helper.unload();
    error = await runFailing({ operation: 'deck-scan' }, { position: 'A1' });
    assert.equal(error.field, 'position');
    await helper.unload();
    error = await runFailing({ operation: 'reboot' }, {});
    assert.equal(error.field, 'operation');
    assert.deepEqual(writes(sim), []);
  });

  it('a colour names where it came from: msg.colour or the dialog as colour, msg.payload as payload; empty is not given', async function () {
    let error = await runFailing({ operation: 'lights-custom' }, { colour: { red: 300, green: 0, blue: 0 }, payload: '#000000' });
    assert.equal(error.field, 'colour.red');
    await helper.unload();
    error = await runFailing({ operation: 'lights-custom', colour: 'teal', colourType: 'str' }, { payload: '#000000' });
    assert.equal(error.field, 'colour');
    assert.match(String(error.message), /colour must be a colour "#rrggbb"/);
    await helper.unload();
    assert.deepEqual(writes(sim), []);
    // the help: "when the dialog's colour and msg.colour are empty, msg.payload"
    const set = await run({ operation: 'lights-custom' }, { colour: '', payload: '#102030' });
    assert.deepEqual(set.payload, { red: 16, green: 32, blue: 48, white: 0 });
  });

  it('lights: a custom colour from the dialog, read back, automatic', async function () {
    const node = await load({ operation: 'msg', colour: '#102030', colourType: 'str' });
    const set = await node.run({ operation: 'lights-custom' });
    assert.deepEqual(set.payload, { red: 16, green: 32, blue: 48, white: 0 });
    const read = await node.run({ operation: 'lights-get' });
    assert.deepEqual(read.payload, { mode: 'Custom', red: 16, green: 32, blue: 48, white: 0 });
    await node.run({ operation: 'lights-automatic' });
    assert.equal(((await node.run({ operation: 'lights-get' })).payload as Msg).mode, 'Automatic');
  });

  it('initialise: sent once when idle; refused while a run is in progress, nothing sent', async function () {
    const node = await load({ operation: 'msg' });
    await node.run({ operation: 'initialize' });
    assert.equal((await node.run({ operation: 'is-initialized' })).payload, false);
    await until(async () => (await node.run({ operation: 'is-initialized' })).payload === true, 'initialised', 10_000);
    sim.runs.create({ protocolId: 1, simulate: true }, 'admin');
    const failed = await node.runFailing({ operation: 'initialize' });
    assert.match(String((failed._error as Msg).message), /run is in progress/);
    assert.deepEqual(
      writes(sim).filter((w) => w.endsWith('initialize')),
      ['POST /api/v1/instruments/initialize'],
    );
  });

  it('reads is-parked, has-tips, a deck scan and a page of traces', async function () {
    const node = await load({ operation: 'msg' });
    assert.equal((await node.run({ operation: 'is-parked' })).payload, true);
    assert.equal((await node.run({ operation: 'has-tips' })).payload, false);
    assert.equal(((await node.run({ operation: 'deck-scan', position: 4 })).payload as Msg).position, 4);
    const traces = await node.run({ operation: 'traces', limit: 1 });
    assert.equal((traces.payload as unknown[]).length, 1);
    assert.equal(traces.limit, 1);
  });

  describe('audit', function () {
    const audit = useAuditDir(runtimeSettings);

    it('every write (heater, lights, initialise) has an intent and an outcome with lh-instrument as actor', async function () {
      const node = await load({ operation: 'msg' });
      await node.run({ operation: 'heater-start', temperature: 40 });
      await node.run({ operation: 'lights-custom', payload: '#ffffff' });
      await node.run({ operation: 'initialize' });
      await node.run({ operation: 'snapshot' });
      await helper.unload();
      const records = audit.records();
      const intents = records.filter((r) => r.phase === 'intent');
      assert.deepEqual(
        intents.map((r) => (r.phase === 'intent' ? r.what.operation : '')),
        ['heater-start', 'lights-custom', 'lights-colour', 'initialize'],
      );
      for (const r of intents) {
        assert.ok(r.phase === 'intent' && r.who.nodeType === 'lh-instrument');
        assert.ok(records.some((o) => o.phase === 'outcome' && o.id === r.id && o.outcome.result === 'applied'));
      }
    });
  });
});
