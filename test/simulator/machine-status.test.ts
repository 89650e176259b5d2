import { strict as assert } from 'node:assert';

import { LiquidHandlerClient } from '../../src/client';
import { bearer, describeStatus, useLoggedInHarness } from './helpers';

describe('simulator: what the workstation says about itself (system ready, controller, sensors, identity, versions)', function () {
  const h = useLoggedInHarness();

  const get = async (path: string, status = 200): Promise<unknown> => {
    const res = await h.a.get(`/api/v1${path}`, bearer(h.token));
    assert.equal(res.status, status, describeStatus(res));
    return res.data;
  };

  it('serves the shapes the hardware-tested client reads, and the control API changes them', async function () {
    assert.deepEqual(await get('/instruments/connection-status'), {
      isControlled: false,
      controllerMachineName: '',
      controllerUserName: '',
    });
    assert.deepEqual(await get('/service-software-api/sensor-status'), { isDoorClosed: true, isEnclosurePresent: true });
    assert.equal(((await get('/instruments')) as Record<string, unknown>).serialNumber, 'SIM-0001');
    assert.ok(Array.isArray(await get('/software-versions')));
    h.sim.configureMachine({
      isDoorClosed: false,
      isControlled: true,
      controllerMachineName: 'PC-7',
      stoppedServices: ['Scheduler'],
    });
    assert.equal(((await get('/service-software-api/sensor-status')) as Record<string, unknown>).isDoorClosed, false);
    assert.equal(((await get('/instruments/connection-status')) as Record<string, unknown>).controllerMachineName, 'PC-7');
    const ready = (await get('/system-ready')) as {
      isServerReady: boolean;
      requiredServices: { name: string; isRunning: boolean }[];
    };
    assert.equal(ready.isServerReady, false);
    assert.deepEqual(
      ready.requiredServices.find((s) => s.name === 'Scheduler'),
      { name: 'Scheduler', isRunning: false },
    );
    assert.throws(() => h.sim.configureMachine({ isDoorClosed: 'no' }), /isDoorClosed must be a boolean/);
  });

  it('offered: false answers 404, and the client reads that as "not offered" (undefined), not as an error', async function () {
    h.sim.configureMachine({ offered: false });
    await get('/instruments/connection-status', 404);
    const client = new LiquidHandlerClient({ baseUrl: h.sim.baseUrl, credentials: { username: 'admin', password: 'labwire' } });
    try {
      assert.deepEqual(await client.machine.startReadiness(), {
        systemReady: undefined,
        connection: undefined,
        sensors: undefined,
      });
      assert.equal(await client.machine.softwareVersions(), undefined);
      h.sim.configureMachine({ offered: true });
      assert.deepEqual(await client.machine.info(), {
        instrumentName: 'Simulated workstation',
        serialNumber: 'SIM-0001',
        isEnclosurePresent: true,
      });
    } finally {
      await client.close();
    }
  });
});
