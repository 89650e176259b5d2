/**
 * Issue 33: the deck controls against the simulator over real HTTP: what is sent (paths, bodies, order), what is
 * read, what the simulator refuses as an instrument does, and that refused input never reaches it.
 */
import assert from 'node:assert/strict';
import http from 'http';

import fc from 'fast-check';

import { imageType, LhError } from '../../src/client';
import { AMBIENT_CELSIUS, CELSIUS_PER_SECOND, DeckSim, INITIALIZE_MS } from '../../src/simulator/routes-deck';
import { TimerSet } from '../../src/simulator/timers';
import { useClients } from '../support/client-suite';
import { closeLocal, listenLocal } from '../support/local-server';
import { until } from '../support/until';

const deckRequests = (sim: { requests: { method: string; path: string; body: unknown }[] }) =>
  sim.requests.filter((r) => !/authenticate/.test(r.path)).map((r) => ({ method: r.method, path: r.path, body: r.body }));

describe('deck controls (client ↔ simulator)', function () {
  const suite = useClients();

  it('takes a PNG of the deck: rectified by default, with when it was taken', async function () {
    const c = suite.make();
    const before = Date.now();
    const shot = await c.deck.snapshot();
    assert.equal(shot.contentType, 'image/png');
    assert.equal(imageType(shot.content), 'image/png');
    assert.ok(Date.parse(shot.takenAt) >= before - 1);
    await c.deck.snapshot(false);
    assert.deepEqual(
      deckRequests(suite.sim).map((r) => r.path),
      ['/api/v1/camera/true', '/api/v1/camera/false'],
    );
  });

  it('the picture marks the pending error: another error position gives another picture', async function () {
    const c = suite.make();
    const plain = (await c.deck.snapshot()).content;
    const error = suite.sim.injectPendingError({ title: 'Liquid level not detected', message: 'channel 3, plate P2 well B4' });
    const marked = (await c.deck.snapshot()).content;
    assert.notDeepEqual(marked, plain);
    suite.sim.resolvePendingError(error.id);
    suite.sim.injectPendingError({ title: 'Arm collision', message: 'at position 7' });
    assert.notDeepEqual((await c.deck.snapshot()).content, marked);
  });

  it('no camera (404) and a camera answering text are refused, each with its reason', async function () {
    const c = suite.make();
    suite.sim.configureDeck({ camera: false });
    await assert.rejects(c.deck.snapshot(), (err: unknown) => err instanceof LhError && err.statusCode === 404);
    suite.sim.configureDeck({ camera: true, cameraNotImage: true });
    await assert.rejects(c.deck.snapshot(), /not an image/);
  });

  it('a camera answering a huge body: refused once past 8 MiB, the rest never read into memory', async function () {
    // a proxy in front of the simulator whose camera streams a 40 MiB "PNG" (a broken camera service, a raw frame)
    const BODY = 40 * 1024 * 1024;
    let written = 0;
    let asked = 0;
    const proxy = http.createServer((req, res) => {
      if (req.url?.includes('/api/v1/camera/')) {
        asked++;
        res.writeHead(200, { 'Content-Type': 'image/png' });
        const chunk = Buffer.alloc(64 * 1024, 7);
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(chunk);
        const pump = (): void => {
          while (written < BODY && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      const upstream = http.request(
        `${suite.sim.baseUrl}${req.url ?? ''}`,
        { method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    const url = await listenLocal(proxy);
    try {
      const c = suite.make({ baseUrl: url });
      await assert.rejects(c.deck.snapshot(), /snapshot: .*larger than 8388608 bytes/);
      assert.equal(asked, 1, 'not asked again');
      // what the client took before it hung up: the 8 MiB cap plus what the loopback's socket buffers hold, far from
      // the 32 MiB any other answer may have (32 cameras in flight would hold 1 GiB)
      assert.ok(written < 24 * 1024 * 1024, `${written} bytes sent before the client hung up`);
    } finally {
      await closeLocal(proxy);
    }
  });

  it('heater: start sends a bare integer, status reads both temperatures, stop ends control', async function () {
    const c = suite.make();
    assert.equal(await c.deck.startTemperatureControl('37'), 37);
    const status = await c.deck.temperatureStatus();
    assert.equal(status.targetTemperature, 37);
    assert.equal(typeof status.currentTemperature, 'number');
    await c.deck.stopTemperatureControl();
    assert.equal((await c.deck.temperatureStatus()).targetTemperature, null);
    const sent = deckRequests(suite.sim).filter((r) => r.method === 'PUT');
    assert.deepEqual(sent, [
      { method: 'PUT', path: '/api/v1/thermal-device/hhc/start-temperature-control', body: 37 },
      { method: 'PUT', path: '/api/v1/thermal-device/hhc/stop-temperature-control', body: '' },
    ]);
  });

  it('refused °C and colours never reach the instrument', async function () {
    const c = suite.make();
    await assert.rejects(c.deck.startTemperatureControl(37.5), /temperature must be a whole number/);
    await assert.rejects(c.deck.startTemperatureControl(200), /from 0 to 105/);
    await assert.rejects(
      c.deck.setCustomLighting({ red: 256, green: 0, blue: 0 }),
      /payload\.red must be a whole number from 0 to 255/,
    );
    assert.deepEqual(deckRequests(suite.sim), []);
  });

  it('the simulator refuses what the instrument refuses: a °C below its range, a colour without custom lighting', async function () {
    const c = suite.make();
    await assert.rejects(c.deck.startTemperatureControl(2), (err: unknown) => err instanceof LhError && err.statusCode === 400);
    // POST enclosure before set-custom-lighting
    await assert.rejects(
      c.session.send({
        api: 'A',
        method: 'POST',
        path: '/enclosure',
        operation: 'x',
        body: { Red: 1, Green: 1, Blue: 1, White: 1 },
        idempotent: false,
      }),
      (err: unknown) => err instanceof LhError && err.statusCode === 409,
    );
  });

  it('any °C (seeded): out of 0..105 refused before sending; sent ones are applied or refused by the instrument (4xx)', async function () {
    const c = suite.make();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -40, max: 160 }), async (t) => {
        suite.sim.clearRequests();
        const outcome = await c.deck.startTemperatureControl(t).then(
          () => 'applied',
          (err: LhError) => (err.kind === 'validation' ? 'refused here' : `refused ${err.statusCode}`),
        );
        const sent = suite.sim.requests.filter((r) => r.path.endsWith('start-temperature-control'));
        if (t < 0 || t > 105) assert.deepEqual([outcome, sent.length], ['refused here', 0], `${t}`);
        else if (t < 4) assert.deepEqual([outcome, sent.length], ['refused 400', 1], `${t}`);
        else {
          assert.deepEqual([outcome, sent.map((r) => r.body)], ['applied', [t]], `${t}`);
          assert.equal((await c.deck.temperatureStatus()).targetTemperature, t);
        }
      }),
      { numRuns: 40, seed: 33 },
    );
  });

  it('any colour (seeded): what is set is what the instrument then reports', async function () {
    const c = suite.make();
    const ch = fc.integer({ min: 0, max: 255 });
    await fc.assert(
      fc.asyncProperty(ch, ch, ch, ch, async (red, green, blue, white) => {
        await c.deck.setCustomLighting({ red, green, blue, white });
        assert.deepEqual(await c.deck.lighting(), { mode: 'Custom', red, green, blue, white });
      }),
      { numRuns: 25, seed: 33 },
    );
  });

  it('custom lights: set-custom-lighting, then the colour {Red, Green, Blue, White}; automatic; read back', async function () {
    const c = suite.make();
    assert.deepEqual(await c.deck.setCustomLighting('#ff8000'), { red: 255, green: 128, blue: 0, white: 0 });
    assert.deepEqual(await c.deck.lighting(), { mode: 'Custom', red: 255, green: 128, blue: 0, white: 0 });
    await c.deck.setAutomaticLighting();
    assert.equal(((await c.deck.lighting()) as { mode: string }).mode, 'Automatic');
    assert.deepEqual(
      deckRequests(suite.sim).filter((r) => r.method === 'POST'),
      [
        { method: 'POST', path: '/api/v1/enclosure/set-custom-lighting', body: '' },
        { method: 'POST', path: '/api/v1/enclosure', body: { Red: 255, Green: 128, Blue: 0, White: 0 } },
        { method: 'POST', path: '/api/v1/enclosure/set-automatic-lighting', body: '' },
      ],
    );
  });

  it('initialise: not initialised while homing, initialised after, traced; refused during a run and while homing', async function () {
    const c = suite.make();
    await c.deck.initialize();
    assert.equal(await c.deck.isInitialized(), false);
    await assert.rejects(c.deck.initialize(), (err: unknown) => err instanceof LhError && err.statusCode === 409);
    await until(() => c.deck.isInitialized(), 'initialised', INITIALIZE_MS + 5000);
    const traces = await c.deck.traces({ sources: 'MNE', limit: 10 });
    assert.ok(
      traces.items.some((t) => t.message.startsWith('["Initialize",')),
      JSON.stringify(traces.items),
    );
    await c.runs.createRun({ protocolId: 1 });
    await assert.rejects(c.deck.initialize(), /run is in progress/);
  });

  it('reads is-parked, has-tips and a deck scan; refuses a position out of range before sending', async function () {
    const c = suite.make();
    assert.equal(await c.deck.isParked(), true);
    assert.equal(await c.deck.hasTips(), false);
    assert.deepEqual(await c.deck.deckScan(3), { position: 3, occupied: false, labware: null });
    await assert.rejects(c.deck.deckScan(0), /position must be a deck position/);
    await assert.rejects(c.deck.deckScan(99), (err: unknown) => err instanceof LhError && err.statusCode === 404);
  });

  it('traces are paged: offset and limit', async function () {
    const c = suite.make();
    for (let i = 0; i < 5; i++) await c.deck.snapshot();
    const first = await c.deck.traces({ offset: 0, limit: 2 });
    const next = await c.deck.traces({ offset: 2, limit: 2 });
    assert.equal(first.items.length, 2);
    assert.equal(next.items.length, 2);
    assert.deepEqual(
      suite.sim.requests.filter((r) => r.path === '/api/v1/traces').map((r) => r.query),
      [
        { offset: '0', limit: '2' },
        { offset: '2', limit: '2' },
      ],
    );
  });
});

describe('simulated heater-cooler: moves toward its target over time', function () {
  it('rises at CELSIUS_PER_SECOND up to the target, and falls back to ambient once stopped', function () {
    let now = 0;
    const deck = new DeckSim({
      timers: new TimerSet(),
      now: () => now,
      runs: { state: 'Idle' } as never,
      pendingErrors: () => [],
    });
    assert.equal(deck.temperature(), AMBIENT_CELSIUS);
    deck.startHeater(37);
    now = 10_000;
    assert.equal(deck.temperature(), AMBIENT_CELSIUS + 10 * CELSIUS_PER_SECOND);
    now = 1_000_000;
    assert.equal(deck.temperature(), 37);
    deck.stopHeater();
    now += 4_000;
    assert.equal(deck.temperature(), 37 - 4 * CELSIUS_PER_SECOND);
    deck.startHeater(4);
    now += 1_000_000;
    assert.equal(deck.temperature(), 4);
  });
});
