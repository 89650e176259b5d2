/**
 * The request deadlines of the hardware-tested client (observed-instrument.md): 120 s for protocol-run/create (and
 * the confirmation of loading), 180 s for instruments/initialize, 30 s for a camera image, 120 s for a deck scan, at
 * least 30 s for a login; every other request the lh-server's timeout. The instrument takes that long to answer
 * (it homes its axes, compiles the run): a shorter deadline fails a request the instrument is still carrying out.
 * Each operation asks for its deadline and the transport waits max(node timeout, that) before it gives up (fake
 * clock; the instrument here never answers).
 */
import assert from 'node:assert/strict';
import http from 'http';

import FakeTimers from '@sinonjs/fake-timers';

import { DeckApi, LhError, RunsApi, Transport } from '../../src/client';
import type { UnsignedSpec } from '../../src/client/session';
import { closeLocal, listenLocal } from '../support/local-server';

/** What each operation asks of the transport: its deadline (undefined: the node timeout) and whether it may be resent. */
async function specOf(call: (runs: RunsApi, deck: DeckApi) => Promise<unknown>): Promise<UnsignedSpec> {
  let seen: UnsignedSpec | undefined;
  const sender = async <T>(spec: UnsignedSpec): Promise<{ status: number; data: T; attempts: number }> => {
    seen ??= spec;
    // the answers these operations read: a PNG for the camera, a run status for the reads of a run start
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    return { status: 200, data: (spec.responseType === 'buffer' ? png : {}) as T, attempts: 1 };
  };
  await call(new RunsApi(sender), new DeckApi(sender)).catch(() => undefined);
  assert.ok(seen, 'a request was made');
  return seen;
}

describe('review: the deadlines of the hardware-tested client, per operation', function () {
  const cases: [string, (runs: RunsApi, deck: DeckApi) => Promise<unknown>, number | undefined, boolean][] = [
    ['protocol-run/create', (r) => r.createRun({ protocolId: 1 }), 120_000, false],
    ['protocol-run/load-complete', (r) => r.loadComplete({ protocolId: 1 }), 120_000, false],
    ['instruments/initialize', (_r, d) => d.initialize(), 180_000, false],
    ['camera/true', (_r, d) => d.snapshot(), 30_000, true],
    ['deck/scan/1', (_r, d) => d.deckScan(1), 120_000, true],
    ['protocol-run (status)', (r) => r.status(), undefined, true],
    ['protocol-run/pause', (r) => r.pause(), undefined, true],
    ['protocol-run/abort', (r) => r.abort(), undefined, true],
    ['thermal-device/hhc/temperature-status', (_r, d) => d.temperatureStatus(), undefined, true],
  ];
  for (const [what, call, deadline, resendable] of cases) {
    it(`${what}: ${deadline === undefined ? 'the node timeout' : `at least ${deadline / 1000} s`}`, async function () {
      const spec = await specOf(call);
      assert.equal(spec.minTimeoutMs, deadline);
      if (!resendable) assert.equal(spec.idempotent, false, 'it moves hardware: never resent');
    });
  }

  describe('the transport waits that long, not the node timeout (fake clock)', function () {
    let server: http.Server;
    let url = '';
    const held: http.ServerResponse[] = [];
    let clock: ReturnType<typeof FakeTimers.install> | undefined;
    before(async function () {
      server = http.createServer((req, res) => {
        req.resume();
        held.push(res); // never answered: the instrument still homing its axes
      });
      url = await listenLocal(server);
    });
    after(async function () {
      await closeLocal(server);
    });
    afterEach(function () {
      clock?.uninstall();
      clock = undefined;
      for (const res of held.splice(0)) res.destroy();
    });

    it('initialise with a 10 s node timeout: still waiting at 179 s, a timeout at 180 s, sent once', async function () {
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const t = new Transport({ baseUrl: url, timeoutMs: 10_000, retries: 2, retryBaseDelayMs: 1 });
      const deck = new DeckApi((spec) => t.request({ ...spec }));
      let outcome: unknown;
      const sent = deck.initialize().then(
        () => (outcome = 'answered'),
        (err: unknown) => (outcome = err),
      );
      // setTimeout is fake: wait for the request's arrival on setImmediate turns (real I/O goes on meanwhile)
      for (let turn = 0; held.length === 0; turn++) {
        assert.ok(turn < 100_000, 'the instrument has the request');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await clock.tickAsync(179_000);
      assert.equal(outcome, undefined, 'not given up at the node timeout, nor at 179 s');
      await clock.tickAsync(1_000);
      const ended: unknown = await sent;
      assert.ok(ended instanceof LhError && ended.kind === 'timeout', String(ended));
      assert.match(ended.message, /within 180000 ms/);
      assert.equal(held.length, 1, 'never resent');
      t.close();
    });
  });
});
