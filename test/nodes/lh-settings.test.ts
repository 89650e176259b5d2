import assert from 'node:assert/strict';
import path from 'path';
import { LoggedRequest, Simulator } from '../../src/simulator';
import { collect, helper, nextMessage, serverFlow, startSimulator, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

/** Only the modules this file needs (loadFlow loads every type of package.json, some of which may not be built yet). */
const built = (type: string): ((RED: unknown) => void) => require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', type, `${type}.js`));

const SEED = { hideKeyboard: false, generateRunReport: true, allowRedWarningOverride: false, defaultAmbientTemperature: 22 };

describe('lh-settings', function () {
  let sim: Simulator;

  before(async function () {
    sim = await startSimulator();
  });
  after(async function () {
    await sim.stop();
  });
  afterEach(async function () {
    await helper.unload();
    sim.reset();
  });

  function sent(): LoggedRequest[] {
    return sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate'));
  }

  async function load(config: Record<string, unknown>): Promise<void> {
    const server = serverFlow(sim, { withB: false });
    await helper.load(
      [tlsConfigNode, built('lh-server'), built('lh-settings')],
      [
        ...server.nodes,
        { id: 'settings', type: 'lh-settings', server: 'server', wires: [['out']], ...config },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['settings'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  }

  async function run(config: Record<string, unknown>, msg: Msg): Promise<Msg> {
    await load(config);
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('settings').receive(msg);
    return out;
  }

  async function runFailing(config: Record<string, unknown>, msg: Msg): Promise<Msg> {
    await load(config);
    const caught = nextMessage(helper.getNode('caught'));
    const outputs = collect(helper.getNode('out'));
    helper.getNode('settings').receive(msg);
    const failed = await caught;
    assert.equal(outputs.length, 0);
    return failed._error as Msg;
  }

  it('gets the software settings and keeps other msg properties', async function () {
    const msg = await run({ operation: 'get-software-settings' }, { payload: 'ignored', topic: 'settings', n: 1 });
    assert.deepEqual(msg.payload, SEED);
    assert.equal(msg.statusCode, 200);
    assert.equal(msg.topic, 'settings');
    assert.equal(msg.n, 1);
    const [req] = sent();
    assert.equal(sent().length, 1);
    assert.equal(req.method, 'GET');
    assert.equal(req.path, '/api/v1/settings/software-settings');
    assert.match(req.authorization ?? '', /^Bearer ey/);
  });

  it('gets the policy settings, chosen by msg.operation', async function () {
    const msg = await run({ operation: 'msg' }, { operation: 'get-policy-settings' });
    const policy = msg.payload as Msg;
    assert.equal(policy.maximumLoginAttempts, 5);
    assert.equal(policy.enableUserManagement, true);
    assert.equal(sent()[0].path, '/api/v1/settings/policy-settings');
  });

  it('merges a partial payload into the current settings, writes them and outputs them read back', async function () {
    const msg = await run({ operation: 'set-software-settings', mode: 'merge' }, { payload: { generateRunReport: false, defaultAmbientTemperature: 25 } });
    const expected = { ...SEED, generateRunReport: false, defaultAmbientTemperature: 25 };
    assert.deepEqual(msg.payload, expected);
    assert.deepEqual(sim.state.softwareSettings, expected);
    const [read, write, readBack] = sent();
    assert.equal(sent().length, 3);
    assert.deepEqual([read.method, read.path], ['GET', '/api/v1/settings/software-settings']);
    assert.deepEqual([write.method, write.path], ['POST', '/api/v1/settings/software-settings']);
    assert.equal(write.contentType, 'application/json-patch+json');
    assert.deepEqual(write.body, expected);
    assert.match(write.authorization ?? '', /^Bearer ey/);
    assert.deepEqual([readBack.method, readBack.path], ['GET', '/api/v1/settings/software-settings']);
  });

  it('replaces all settings without reading them first when asked (msg.mode)', async function () {
    const payload = { hideKeyboard: true, generateRunReport: false, allowRedWarningOverride: true, defaultAmbientTemperature: 20 };
    const msg = await run({ operation: 'set-software-settings', mode: 'msg' }, { payload, mode: 'replace' });
    assert.deepEqual(msg.payload, payload);
    assert.deepEqual(
      sent().map((r) => r.method),
      ['POST', 'GET'],
    );
    assert.deepEqual(sent()[0].body, payload);
  });

  it('refuses an incomplete payload in replace mode and sends nothing', async function () {
    const error = await runFailing({ operation: 'set-software-settings', mode: 'replace' }, { payload: { hideKeyboard: true } });
    assert.equal(error.field, 'payload.generateRunReport');
    assert.match(String(error.message), /payload.generateRunReport is required/);
    assert.equal(sim.requests.length, 0);
  });

  it('checks field types and unknown fields before sending, naming the field', async function () {
    const cases: [unknown, string, RegExp][] = [
      [{ hideKeyboard: 'yes' }, 'payload.hideKeyboard', /must be a boolean/],
      [{ defaultAmbientTemperature: 21.5 }, 'payload.defaultAmbientTemperature', /must be a whole number/],
      [{ defaultAmbientTemperature: 2 ** 31 }, 'payload.defaultAmbientTemperature', /must be a whole number/],
      [{ screenSaver: true }, 'payload.screenSaver', /is not a software setting/],
      [{}, 'payload', /at least one software setting/],
      ['hideKeyboard=true', 'payload', /must be an object/],
    ];
    for (const [payload, field, rule] of cases) {
      const error = await runFailing({ operation: 'set-software-settings' }, { payload });
      assert.equal(error.field, field);
      assert.match(String(error.message), rule);
      assert.equal(error.operation, 'set-software-settings');
      await helper.unload();
    }
    assert.equal(sim.requests.length, 0);
    assert.deepEqual(sim.state.softwareSettings, SEED);
  });

  it('rejects an unknown operation or mode and sends nothing', async function () {
    let error = await runFailing({ operation: 'msg' }, { operation: 'set' });
    assert.equal(error.field, 'operation');
    assert.match(String(error.message), /must be one of get-software-settings, set-software-settings, get-policy-settings/);
    await helper.unload();
    error = await runFailing({ operation: 'set-software-settings', mode: 'msg' }, { mode: 'overwrite', payload: { hideKeyboard: true } });
    assert.equal(error.field, 'mode');
    assert.equal(sim.requests.length, 0);
  });

  it('reports a failure of the instrument to Catch nodes', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 500 });
    await load({ operation: 'get-policy-settings' });
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({});
    const error = (await caught)._error as Msg;
    assert.equal(error.statusCode, 500);
  });
});
