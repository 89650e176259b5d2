import assert from 'node:assert/strict';

import { helper } from '../support/runtime';
import { useRunNode } from './lh-run.support';

describe('lh-run start: system ready, controller and door are asked first', function () {
  const { sim, run, runFailing } = useRunNode();
  const moved = (): string[] =>
    sim.requests.filter((r) => r.method !== 'GET' && !r.path.startsWith('/api/v1/authenticate')).map((r) => r.path);

  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['the door is open', { isDoorClosed: false }, /start refused: the door is open/],
    [
      'another machine controls the instrument',
      { isControlled: true, controllerMachineName: 'LAB-PC-2', controllerUserName: 'ana' },
      /controlled by another machine \(LAB-PC-2, user ana\)/,
    ],
    ['a service is down', { stoppedServices: ['Scheduler'] }, /the system is not ready \(not running: Scheduler\)/],
  ];
  for (const [what, machine, reason] of cases) {
    it(`refuses when ${what}, naming it, and sends nothing that moves hardware`, async function () {
      sim.configureMachine(machine);
      const error = await runFailing({ operation: 'start', protocolId: '1', simulate: 'true' }, {});
      assert.match(String(error.message), reason);
      assert.deepEqual(moved(), []);
    });
  }

  it('confirming a run stopped at Loading is refused too while the door is open', async function () {
    const loading = await run({ operation: 'start', protocolId: '1', simulate: 'true', stopAtLoading: true }, {});
    assert.equal(loading.outcome, 'loading');
    await helper.unload();
    sim.configureMachine({ isDoorClosed: false });
    sim.clearRequests();
    const error = await runFailing({ operation: 'start' }, { confirmLoading: true });
    assert.match(String(error.message), /the door is open/);
    assert.deepEqual(moved(), []);
  });

  it('an instrument that does not offer these reads (404) starts as before', async function () {
    sim.configureMachine({ offered: false });
    const msg = await run({ operation: 'start', protocolId: '1', simulate: 'true' }, {});
    assert.equal(msg.outcome, 'started');
  });
});
