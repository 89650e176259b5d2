import assert from 'node:assert/strict';

import { LhError, RequestObservation } from '../../src/client';
import { useClients } from '../support/client-suite';
import { until } from '../support/until';

describe('client: request outcomes for observers (onRequestOutcome)', function () {
  const { sim, make } = useClients();

  it('tells an observer every outcome, before the caller gets it: answered, refused, unanswered, with its interface', async function () {
    const c = make({ retries: 0 });
    const seen: RequestObservation[] = [];
    let seenBeforeCaller = -1;
    const off = c.onRequestOutcome((o) => seen.push(o));
    await c.prep.getSoftwareSettings().then(() => (seenBeforeCaller = seen.length));
    assert.equal(seenBeforeCaller, 2, 'the login and the request, both told before the caller continued');
    assert.deepEqual(
      seen.map((o) => [o.api, o.operation, o.status, o.error === undefined]),
      [
        ['A', 'authenticate', 200, true],
        ['A', 'get-software-settings', 200, true],
      ],
    );
    await c.instrument.unhandledErrors();
    assert.equal(seen.at(-1)?.api, 'B');
    sim.setFaults({ statusRate: 1, statusCode: 503 });
    await assert.rejects(c.prep.getSoftwareSettings());
    const failed = seen.at(-1);
    assert.equal(failed?.status, 503);
    assert.ok(failed?.error instanceof LhError);
    sim.clearFaults();
    off();
    await c.prep.getSoftwareSettings();
    assert.equal(seen.at(-1), failed, 'nothing after the observer stopped');
  });

  it('numbers requests as they are sent: requests under way together share what was sent when each outcome came', async function () {
    const c = make();
    const seen: RequestObservation[] = [];
    c.onRequestOutcome((o) => seen.push(o));
    await c.prep.getSoftwareSettings(); // logged in
    seen.length = 0;
    await Promise.all([c.prep.getSoftwareSettings(), c.instrument.unhandledErrors()]);
    assert.deepEqual(seen.map((o) => o.sent).sort(), [3, 4]);
    assert.ok(
      seen.every((o) => o.latest === 4),
      JSON.stringify(seen.map((o) => [o.sent, o.latest])),
    );
  });

  it('a throwing observer changes nothing for the caller', async function () {
    const c = make();
    c.onRequestOutcome(() => {
      throw new Error('observer bug');
    });
    const settings = await c.prep.getSoftwareSettings();
    assert.ok(settings);
  });

  it('one outcome per request, retries included; none for what close() ends; an async observer that fails is contained', async function () {
    const c = make({ retries: 2, retryBaseDelayMs: 5 });
    await c.prep.getSoftwareSettings(); // logged in
    const seen: RequestObservation[] = [];
    c.onRequestOutcome((o) => seen.push(o));
    c.onRequestOutcome(async () => {
      await Promise.resolve();
      throw new Error('async observer bug');
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      sim.setFaults({ statusRate: 1, statusCode: 503 });
      await assert.rejects(c.prep.getSoftwareSettings(), (e: LhError) => e.attempts === 3);
      assert.equal(seen.length, 1, 'three attempts, one outcome');
      sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 5000 });
      const held = c.prep.getSoftwareSettings();
      await until(() => sim.requests.some((r) => r.status === 0), 'the held request at the simulator');
      c.destroy();
      await assert.rejects(held, /closed/);
      await new Promise((r) => setImmediate(r));
      assert.equal(seen.length, 1, 'nothing told after close');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a client closed while requests are under way tells its observers nothing more (their outcomes come after close)', async function () {
    const c = make({ retries: 0 });
    const seen: RequestObservation[] = [];
    c.onRequestOutcome((o) => seen.push(o));
    await c.prep.getSoftwareSettings(); // logged in
    const before = seen.length;
    const held = (): number => sim.requests.filter((r) => r.status === 0).length;
    const heldBefore = held();
    sim.setFaults({ timeoutRate: 1, methods: ['GET'] }); // held: under way until the close
    const underWay = [c.prep.getSoftwareSettings(), c.instrument.unhandledErrors()].map((p) =>
      p.then(
        () => 'answered',
        (e: unknown) => e,
      ),
    );
    await until(() => held() >= heldBefore + 2, 'both requests held at the simulator'); // under way, not a fixed sleep
    await c.close();
    const outcomes = await Promise.all(underWay);
    assert.ok(
      outcomes.every((o) => o instanceof LhError),
      'both failed by the close',
    );
    // close() logs out (a request of its own, answered before the transport closes); the ones it cut are not told
    assert.deepEqual(
      seen.slice(before).map((o) => o.operation),
      ['logout'],
    );
    sim.clearFaults();
  });
});
