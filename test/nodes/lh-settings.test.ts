import assert from 'node:assert/strict';

import { LoggedRequest } from '../../src/simulator';
import { configuredNode, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;

const SEED = { hideKeyboard: false, generateRunReport: true, allowRedWarningOverride: false, defaultAmbientTemperature: 22 };

describe('lh-settings', function () {
  const sim = useInstrument();

  function sent(): LoggedRequest[] {
    return sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate'));
  }

  // only the modules this file needs (every type of package.json may not be built yet)
  const { load, run, runFailing } = configuredNode(
    sim,
    { id: 'settings', type: 'lh-settings' },
    { only: ['lh-server', 'lh-settings'] },
  );

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
    const msg = await run(
      { operation: 'set-software-settings', mode: 'merge' },
      { payload: { generateRunReport: false, defaultAmbientTemperature: 25 } },
    );
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
    const payload = {
      hideKeyboard: true,
      generateRunReport: false,
      allowRedWarningOverride: true,
      defaultAmbientTemperature: 20,
    };
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
    error = await runFailing(
      { operation: 'set-software-settings', mode: 'msg' },
      { mode: 'overwrite', payload: { hideKeyboard: true } },
    );
    assert.equal(error.field, 'mode');
    assert.equal(sim.requests.length, 0);
  });

  it('reports a failure of the instrument to Catch nodes', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 500 });
    const settings = await load({ operation: 'get-policy-settings' });
    const error = (await settings.runCaught({}))._error as Msg;
    assert.equal(error.statusCode, 500);
  });
});
