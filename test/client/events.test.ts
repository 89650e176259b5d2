import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';

import fc from 'fast-check';
import { WebSocketServer } from 'ws';

import {
  DEFAULT_RECONNECT_FIRST_MS,
  EventChannel,
  eventSocketUrl,
  EventStateChange,
  firmwareErrorFromFrame,
  InstrumentEvent,
  isUnavailableStatus,
  LiquidHandlerClient,
  reconnectDelay,
  reconnectWaitMs,
} from '../../src/client';
import { certPath } from '../../src/simulator';
import { useClients } from '../support/client-suite';
import { closeWsServer, useWsServers } from '../support/ws-servers';

const FAST = { reconnectInitialMs: 20, reconnectMaxMs: 100, random: () => 0.5 };

/** Resolves with the next state change of `channel` that is `state`. */
function nextState(
  client: LiquidHandlerClient,
  channel: EventChannel,
  state: EventStateChange['state'],
): Promise<EventStateChange> {
  return new Promise((resolve) => {
    const off = client.events.onState((change) => {
      if (change.channel !== channel || change.state !== state) return;
      off();
      resolve(change);
    });
  });
}

/** A queue of the events a subscription receives. */
function queue(): { listener: (e: InstrumentEvent) => void; next(): Promise<InstrumentEvent>; seen: InstrumentEvent[] } {
  const seen: InstrumentEvent[] = [];
  const waiting: ((e: InstrumentEvent) => void)[] = [];
  let read = 0;
  return {
    seen,
    listener: (e) => {
      seen.push(e);
      const w = waiting.shift();
      if (w) {
        read++;
        w(e);
      }
    },
    next: () => (read < seen.length ? Promise.resolve(seen[read++]) : new Promise((resolve) => waiting.push(resolve))),
  };
}

/** Subscribes a queue to `channel` of `client`; resolves with the queue once the channel is connected. */
async function listening(client: LiquidHandlerClient, channel: EventChannel): Promise<ReturnType<typeof queue>> {
  const q = queue();
  const connected = nextState(client, channel, 'connected');
  if (channel === 'events') client.events.onEvents(q.listener);
  else client.events.onErrors(q.listener);
  await connected;
  return q;
}

describe('client: event sockets', function () {
  const suite = useClients({ prefix: '/NimbusLite' }, { events: FAST });

  it('derives ws:// and wss:// URLs from the base URL, keeping its path prefix', function () {
    assert.equal(eventSocketUrl('http://10.0.0.5/NimbusLite/', 'events'), 'ws://10.0.0.5/NimbusLite/instinctevents');
    assert.equal(eventSocketUrl('https://lh.lab:8443/NimbusLite', 'errors'), 'wss://lh.lab:8443/NimbusLite/instincterrors');
    assert.equal(eventSocketUrl('http://u:p@host:81', 'events'), 'ws://host:81/instinctevents');
  });

  it('connects when the first listener subscribes and delivers events unwrapped and normalised', async function () {
    const client = suite.make();
    assert.equal(client.events.state('events'), 'idle');
    const q = await listening(client, 'events');
    assert.equal(client.events.state('events'), 'connected');
    assert.equal(client.events.state('errors'), 'idle', 'a channel opens only when someone listens to it');
    suite.sim.publishEvent('MessageBox', 'Door open', { viewId: 'v1', buttons: ['Ok'] });
    assert.deepEqual(await q.next(), {
      code: 'messagebox',
      description: 'Door open',
      data: { viewId: 'v1', buttons: ['Ok'] },
    });
  });

  it('offers the session token on the upgrade, and connects without one when no user is configured', async function () {
    const withUser = suite.make();
    const a = nextState(withUser, 'events', 'connected');
    withUser.events.onEvents(() => undefined);
    await a;
    const token = await withUser.session.token();
    const without = suite.make({ credentials: {} });
    const b = nextState(without, 'errors', 'connected');
    without.events.onErrors(() => undefined);
    await b;
    const upgrades = suite.sim.eventSocketInfo.upgrades.slice(-2);
    assert.deepEqual(
      upgrades.map((u) => [u.channel, u.authorization]),
      [
        ['events', `Bearer ${token}`],
        ['errors', undefined],
      ],
    );
  });

  it('a login that fails does not prevent connecting (without a token)', async function () {
    const client = suite.make({ credentials: { username: 'admin', password: 'wrong' } });
    const connected = nextState(client, 'events', 'connected');
    client.events.onEvents(() => undefined);
    await connected;
    assert.equal(suite.sim.eventSocketInfo.upgrades.at(-1)?.authorization, undefined);
  });

  it('closes the socket when the last listener leaves, and opens it again for a new one', async function () {
    const client = suite.make();
    const connected = nextState(client, 'events', 'connected');
    const offA = client.events.onEvents(() => undefined);
    const offB = client.events.onEvents(() => undefined);
    await connected;
    assert.equal(suite.sim.eventSocketInfo.counts.events, 1, 'one socket per channel, whatever the number of listeners');
    offA();
    offA();
    assert.equal(client.events.state('events'), 'connected');
    offB();
    assert.equal(client.events.state('events'), 'idle');
    await waitFor(() => suite.sim.eventSocketInfo.counts.events === 0);
    const again = nextState(client, 'events', 'connected');
    client.events.onEvents(() => undefined);
    await again;
  });

  it('reconnects after the simulator drops the socket, and receives again', async function () {
    const client = suite.make();
    const q = await listening(client, 'errors');
    const lost = nextState(client, 'errors', 'disconnected');
    const back = nextState(client, 'errors', 'connected');
    assert.equal(suite.sim.dropEventSockets(), 1);
    await lost;
    await back;
    const fw = suite.sim.raiseFirmwareError({ id: 'fw-after-drop' });
    const frame = firmwareErrorFromFrame(await q.next());
    assert.equal(frame.kind, 'raised');
    assert.equal(frame.kind === 'raised' && frame.error.id, fw.id);
  });

  it('reconnects at once after an established connection drops, before the first back-off delay', async function () {
    const client = suite.make({ events: { ...FAST, reconnectInitialMs: 10_000, reconnectMaxMs: 30_000, usefulAfterMs: 50 } });
    await listening(client, 'errors');
    const up = Date.now();
    await waitFor(() => Date.now() - up > 150); // open longer than usefulAfterMs: losing it is a drop, not a failed attempt
    const back = nextState(client, 'errors', 'connected');
    const dropped = Date.now();
    suite.sim.dropEventSockets();
    await back;
    // the claim's own bound: back before the first back-off delay (10 s) could have ended; a busy machine adds
    // milliseconds, not seconds
    assert.ok(Date.now() - dropped < 10_000, `back after ${Date.now() - dropped} ms, not after the 10 s first back-off`);
  });

  it('reconnects after a simulator restart (state kept)', async function () {
    const client = suite.make();
    const q = await listening(client, 'events');
    const lost = nextState(client, 'events', 'disconnected');
    const back = nextState(client, 'events', 'connected');
    await suite.sim.restart(150);
    await lost;
    await back;
    suite.sim.publishEvent('finished', 'Run finished', { runId: 'r1' });
    assert.equal((await q.next()).code, 'finished');
  });

  it('delivers instincterrors frames that firmwareErrorFromFrame reads as raised and resolved', async function () {
    const client = suite.make();
    const q = await listening(client, 'errors');
    const pending = suite.sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
    const raised = firmwareErrorFromFrame(await q.next());
    assert.ok(raised.kind === 'raised');
    assert.equal(raised.error.id, pending.id);
    assert.equal(raised.error.source, 'service');
    assert.deepEqual(raised.error.errorResponses, [{ response: 'Retry' }, { response: 'Abort' }]);
    suite.sim.resolvePendingError(pending.id);
    assert.deepEqual(firmwareErrorFromFrame(await q.next()), { kind: 'resolved', resolvedId: pending.id });
  });

  it('close() closes both sockets and stops listening; later subscriptions do nothing', async function () {
    const client = suite.unmanaged();
    const a = nextState(client, 'events', 'connected');
    const b = nextState(client, 'errors', 'connected');
    client.events.onEvents(() => undefined);
    client.events.onErrors(() => undefined);
    await Promise.all([a, b]);
    await client.close();
    assert.equal(client.events.state('events'), 'closed');
    assert.equal(client.events.state('errors'), 'closed');
    await waitFor(() => suite.sim.eventSocketInfo.counts.events + suite.sim.eventSocketInfo.counts.errors === 0);
    client.events.onEvents(() => undefined)();
    assert.equal(client.events.state('events'), 'closed');
  });
});

describe('client: event sockets on an instrument without them', function () {
  const suite = useClients({ sockets: false }, { events: { ...FAST, reconnectMaxMs: 30 } });

  it('reports unavailable once (HTTP 404), keeps retrying in silence, and closes cleanly', async function () {
    const client = suite.make();
    const changes: EventStateChange[] = [];
    client.events.onState((c) => changes.push(c));
    const unavailable = nextState(client, 'errors', 'unavailable');
    client.events.onErrors(() => undefined);
    const change = await unavailable;
    assert.match(change.reason ?? '', /no instincterrors socket \(HTTP 404\)/);
    const before = upgradeAttempts(suite.sim.requests);
    await waitFor(() => upgradeAttempts(suite.sim.requests) >= before + 3);
    assert.deepEqual(
      changes.map((c) => c.state),
      ['unavailable'],
    );
    assert.equal(client.events.state('errors'), 'unavailable');
  });
});

describe('client: event socket timings', function () {
  it('back-off starts at 3 s, doubles, and is capped; jitter stays within ±20 %', function () {
    const exact = (): number => 0.5;
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((n) => reconnectDelay(n, 3000, 30000, exact)),
      [3000, 6000, 12000, 24000, 30000, 30000],
    );
    assert.equal(
      reconnectDelay(0, 3000, 30000, () => 0),
      2400,
    );
    assert.equal(
      reconnectDelay(0, 3000, 30000, () => 1),
      3600,
    );
  });

  const DEFAULTS = { firstMs: DEFAULT_RECONNECT_FIRST_MS, initialMs: 3000, maxMs: 30000 };

  it('reconnects fast after a close: 25–75 ms, whatever the jitter', function () {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.999999, noNaN: true }), (r) => {
        const wait = reconnectWaitMs({ earlyCloses: 0, failures: 0 }, DEFAULTS, () => r);
        assert.ok(wait >= 25 && wait <= 75, String(wait));
        const afterOneEarly = reconnectWaitMs({ earlyCloses: 1, failures: 0 }, DEFAULTS, () => r);
        assert.ok(afterOneEarly >= 25 && afterOneEarly <= 75, 'one early close may be a fluke: still fast');
      }),
    );
  });

  it('a socket that closes at once is reopened at most 7 times in its first minute and 3 in any later one', function () {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 40, maxLength: 40 }), (rs) => {
        const opens = [0];
        for (let k = 1; opens.length < 40; k++) {
          opens.push(opens[opens.length - 1] + reconnectWaitMs({ earlyCloses: k, failures: 0 }, DEFAULTS, () => rs[k - 1]));
        }
        const inWindow = (from: number): number => opens.filter((t) => t >= from && t < from + 60_000).length;
        assert.ok(inWindow(0) <= 7, `${inWindow(0)} opens in the first minute: ${opens.slice(0, 10)}`);
        for (const t of opens.filter((o) => o >= 60_000)) assert.ok(inWindow(t) <= 3, `${inWindow(t)} opens from ${t}`);
      }),
    );
  });

  it('an instrument down D ms (attempts refused) is reached again by 2.5·D + 300 ms', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20_000 }),
        fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 30, maxLength: 30 }),
        (down, rs) => {
          let at = reconnectWaitMs({ earlyCloses: 0, failures: 0 }, DEFAULTS, () => rs[0]);
          for (let k = 1; at < down; k++) at += reconnectWaitMs({ earlyCloses: 0, failures: k }, DEFAULTS, () => rs[k]);
          assert.ok(at <= 2.5 * down + 300, `down ${down} ms, back at ${at} ms`);
        },
      ),
    );
  });

  it('treats 404 and other refusals as unavailable, 5xx and 429 as worth retrying', function () {
    for (const s of [400, 401, 403, 404, 405, 426, 501]) assert.equal(isUnavailableStatus(s), true, String(s));
    for (const s of [408, 429, 500, 502, 503]) assert.equal(isUnavailableStatus(s), false, String(s));
  });
});

function upgradeAttempts(requests: { path: string }[]): number {
  return requests.filter((r) => r.path.endsWith('/instincterrors')).length;
}

/** Waits until `condition` holds, checking on each turn of the event loop (bounded by the test timeout). */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('client: event sockets over TLS (wss://)', function () {
  let server: https.Server;
  let wss: WebSocketServer;
  let baseUrl: string;
  const open: LiquidHandlerClient[] = [];

  before(async function () {
    server = https.createServer({
      key: fs.readFileSync(certPath('server-key.pem')),
      cert: fs.readFileSync(certPath('server.pem')),
    });
    wss = new WebSocketServer({ server, path: '/NimbusLite/instinctevents' });
    wss.on('connection', (ws) => ws.send(JSON.stringify({ Code: 'hello', Description: '', Data: '{}' })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/NimbusLite`;
  });
  afterEach(async function () {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  after(async function () {
    await closeWsServer(server, wss);
  });

  const client = (tls?: { ca?: string }): LiquidHandlerClient => {
    const c = new LiquidHandlerClient({ baseUrl, tls, events: FAST });
    open.push(c);
    return c;
  };

  it('connects with the CA of the TLS options used for HTTP', async function () {
    const c = client({ ca: fs.readFileSync(certPath('ca.pem'), 'utf8') });
    const q = queue();
    c.events.onEvents(q.listener);
    assert.equal((await q.next()).code, 'hello');
  });

  it('refuses a certificate it cannot verify, saying why, and keeps retrying', async function () {
    const c = client();
    const lost = nextState(c, 'events', 'disconnected');
    c.events.onEvents(() => undefined);
    assert.match((await lost).reason ?? '', /self[- ]signed|unable to verify|certificate/i);
    assert.equal(c.events.state('events'), 'disconnected');
  });
});

describe('client: event socket heartbeat', function () {
  const sockets = useWsServers();
  const open = sockets.open;

  const client = (baseUrl: string): LiquidHandlerClient => {
    const c = new LiquidHandlerClient({ baseUrl, events: { ...FAST, pingIntervalMs: 20, reconnectInitialMs: 10_000 } });
    open.push(c);
    return c;
  };

  /** A server that does not answer pings (or does), and the number of pings it has received. */
  const counted = async (autoPong: boolean): Promise<{ url: string; pings: () => number }> => {
    const { url, wss } = await sockets.listen(autoPong);
    let pings = 0;
    wss.on('connection', (ws) => ws.on('ping', () => pings++));
    return { url, pings: () => pings };
  };

  it('drops a connection whose peer stopped answering pings, and reports it', async function () {
    const server = await counted(false);
    const c = client(server.url);
    const up = nextState(c, 'events', 'connected');
    const lost = nextState(c, 'events', 'disconnected');
    c.events.onEvents(() => undefined);
    await up;
    await lost;
    // counted in pings, not milliseconds: dropped at the first ping left unanswered
    assert.equal(server.pings(), 1, 'detected at the next ping interval');
  });

  it('keeps a connection whose peer answers pings', async function () {
    const server = await counted(true);
    const c = client(server.url);
    const changes: string[] = [];
    c.events.onState((change) => changes.push(change.state));
    const up = nextState(c, 'events', 'connected');
    c.events.onEvents(() => undefined);
    await up;
    // ten pings, each answered (waited for, not a fixed sleep): the connection stays
    await waitFor(() => server.pings() >= 10);
    assert.deepEqual(changes, ['connected']);
  });
});
