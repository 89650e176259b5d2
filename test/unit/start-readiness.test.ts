import assert from 'node:assert/strict';

import fc from 'fast-check';

import { startBlockers, type StartReadiness } from '../../src/client/machine';

describe('startBlockers (what stops lh-run start before anything is sent)', function () {
  it('names each reason plainly', function () {
    assert.deepEqual(startBlockers({}), []);
    assert.deepEqual(
      startBlockers({
        systemReady: { isServerReady: false, stoppedServices: ['Scheduler'] },
        connection: { isControlled: true, controllerMachineName: 'LAB-PC-2', controllerUserName: 'ana' },
        sensors: { isDoorClosed: false, isEnclosurePresent: true },
      }),
      [
        'the system is not ready (not running: Scheduler)',
        'the instrument is controlled by another machine (LAB-PC-2, user ana)',
        'the door is open',
      ],
    );
  });

  it('an open door sensor is no reason on a workstation without an enclosure (review 2)', function () {
    assert.deepEqual(startBlockers({ sensors: { isDoorClosed: false, isEnclosurePresent: false } }), []);
    assert.deepEqual(startBlockers({ sensors: { isDoorClosed: false } }), ['the door is open']);
  });

  it('a read the instrument does not offer (undefined) or a sensor it does not report is no reason', function () {
    assert.deepEqual(startBlockers({ sensors: { isEnclosurePresent: false } }), []);
    assert.deepEqual(startBlockers({ connection: { isControlled: false } }), []);
  });

  it('property: blocks exactly when some read says not ready, controlled or door open', function () {
    const readiness = fc.record(
      {
        systemReady: fc.record({
          isServerReady: fc.boolean(),
          stoppedServices: fc.array(fc.constantFrom('Instrument', 'Scheduler')),
        }),
        connection: fc.record({ isControlled: fc.boolean(), controllerMachineName: fc.option(fc.string(), { nil: undefined }) }),
        sensors: fc.record({
          isDoorClosed: fc.option(fc.boolean(), { nil: undefined }),
          isEnclosurePresent: fc.option(fc.boolean(), { nil: undefined }),
        }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(readiness, (r: StartReadiness) => {
        const unready = r.systemReady !== undefined && (!r.systemReady.isServerReady || r.systemReady.stoppedServices.length > 0);
        const controlled = r.connection?.isControlled === true;
        // no enclosure, no door: only an enclosure that is present (or not reported) has a door that can be open
        const open = r.sensors?.isDoorClosed === false && r.sensors.isEnclosurePresent !== false;
        const reasons = startBlockers(r);
        assert.equal(reasons.length, Number(unready) + Number(controlled) + Number(open));
        assert.equal(
          reasons.some((x) => x.includes('door')),
          open,
        );
      }),
    );
  });
});
