/**
 * Issue 17.4 and 17.8 (last point): live events stay bounded. An instrument that accepts the upgrade and closes at
 * once gets the full back-off (not a reconnect storm), frames over 1 MiB are refused and said once, and a socket
 * that delivers frames is kept even when the instrument never answers pings.
 */
import { strict as assert } from 'node:assert';
import { type ChildProcess, spawn } from 'node:child_process';

import fc from 'fast-check';
import type { WebSocket } from 'ws';

import { EventNotice, EventStateChange, InstrumentEvent, LiquidHandlerClient, reconnectWaitMs } from '../../src/client';
import { useClients } from '../support/client-suite';
import { until } from '../support/until';
import { useWsServers } from '../support/ws-servers';

const HALF = (): number => 0.5; // no jitter: delays are exact

describe('client: event sockets stay bounded', function () {
  this.timeout(30000);
  const suite = useClients({ prefix: '/NimbusLite' }, { events: { random: HALF } });
  const sim = suite.sim;

  it('an instrument that accepts the upgrade and closes at once: at most 3 upgrades per channel in 5 s', async function () {
    sim.setSocketsCloseAtOnce(true);
    // default timings: one fast retry (25–75 ms), then 3 s doubled per early close (0.3: 3 s at once, 2 upgrades)
    const client = suite.make();
    const changes: EventStateChange[] = [];
    client.events.onState((c) => changes.push(c));
    client.events.onEvents(() => undefined);
    client.events.onErrors(() => undefined);
    const started = Date.now();
    await until(() => Date.now() - started >= 5000, 'the 5 s window', 20000);
    const upgrades = sim.eventSocketInfo.upgrades;
    for (const channel of ['events', 'errors'] as const) {
      const n = upgrades.filter((u) => u.channel === channel).length;
      assert.ok(n >= 1 && n <= 3, `${n} upgrades on ${channel} in 5 s (92 before the fix)`);
      const flips = changes.filter((c) => c.channel === channel).length;
      assert.ok(flips <= 6, `${flips} state changes on ${channel} (one connected and one disconnected per upgrade)`);
    }
  });

  it('a 40 MiB frame is refused by the 1 MiB cap, said once, and the next normal frame still arrives', async function () {
    const client = suite.make({ events: { reconnectInitialMs: 20, reconnectMaxMs: 100, random: HALF } });
    const notices: EventNotice[] = [];
    client.events.onNotice((n) => notices.push(n));
    const seen: InstrumentEvent[] = [];
    const reasons: string[] = [];
    client.events.onState((c) => {
      if (c.channel === 'events' && c.state === 'disconnected') reasons.push(c.reason ?? '');
    });
    client.events.onEvents((e) => seen.push(e));
    await until(() => sim.eventSocketInfo.counts.events === 1, 'a connection', 10000);
    const huge = Buffer.alloc(40 * 1024 * 1024, 0x61);
    assert.equal(sim.publishRawFrame('events', huge), 1);
    await until(() => reasons.length === 1, 'the first refusal', 10000);
    assert.match(reasons[0], /a frame larger than 1 MiB was refused \(the frame cap\)/);
    // back again; a second oversized frame is refused too, but said only once
    await until(() => sim.eventSocketInfo.counts.events === 1, 'a connection', 10000);
    sim.publishRawFrame('events', huge);
    await until(() => reasons.length === 2, 'the second refusal', 10000);
    assert.deepEqual(
      notices.map((n) => n.channel),
      ['events'],
    );
    assert.match(notices[0].message, /instinctevents: a frame larger than 1 MiB/);
    await until(() => sim.eventSocketInfo.counts.events === 1, 'a connection', 10000);
    sim.publishEvent('finished', 'Run finished', { runId: 'r1' });
    await until(() => seen.length === 1, 'the frame', 10000);
    assert.equal(seen[0].code, 'finished', 'no oversized frame was ever delivered');
  });

  it('a frame just under the cap is delivered', async function () {
    const client = suite.make({ events: { maxFrameBytes: 64 * 1024 } });
    const seen: InstrumentEvent[] = [];
    client.events.onEvents((e) => seen.push(e));
    await until(() => sim.eventSocketInfo.counts.events === 1, 'a connection', 10000);
    const frame = JSON.stringify({ code: 'maintenancedata', description: 'x'.repeat(60 * 1024), data: '{}' });
    sim.publishRawFrame('events', frame);
    await until(() => seen.length === 1, 'the frame', 10000);
    assert.equal(seen[0].code, 'maintenancedata');
  });
});

describe('client: hostile event sockets (property)', function () {
  this.timeout(60000);
  const sockets = useWsServers();
  const open = sockets.open;

  /** A websocket server that does `behave` with every connection; counts the upgrades. */
  async function serve(behave: (ws: WebSocket) => void, autoPong = true): Promise<{ url: string; upgrades: () => number }> {
    const { url, wss } = await sockets.listen(autoPong);
    let upgrades = 0;
    wss.on('connection', (ws) => {
      upgrades++;
      ws.on('error', () => ws.terminate());
      behave(ws);
    });
    return { url, upgrades: () => upgrades };
  }

  const timings = { reconnectInitialMs: 40, reconnectMaxMs: 320, usefulAfterMs: 400, reconnectAfterDropMs: 5, random: HALF };

  /**
   * Upgrades a client may make within `windowMs` when no connection ever proves useful: 1 + the back-off steps, the
   * more of a client whose connections all open and close early and one whose attempts all fail.
   */
  function bound(windowMs: number): number {
    const t = { firstMs: timings.reconnectAfterDropMs, initialMs: timings.reconnectInitialMs, maxMs: timings.reconnectMaxMs };
    const count = (opens: boolean): number => {
      let at = 0;
      let n = 1;
      for (let k = 1; ; k++) {
        at += reconnectWaitMs(opens ? { earlyCloses: k, failures: 0 } : { earlyCloses: 0, failures: k }, t, HALF);
        if (at > windowMs) return n;
        n++;
      }
    };
    return Math.max(count(true), count(false));
  }

  it('no behaviour that closes before the connection proved useful gets more upgrades than the back-off allows', async function () {
    type Behaviour = {
      kind: 'close' | 'terminate' | 'close-later' | 'oversize' | 'garbage-then-close' | 'frame-then-close';
      afterMs: number;
    };
    const behaviour = fc.record({
      kind: fc.constantFrom<Behaviour['kind']>(
        'close',
        'terminate',
        'close-later',
        'oversize',
        'garbage-then-close',
        'frame-then-close',
      ),
      afterMs: fc.integer({ min: 0, max: 150 }),
    });
    await fc.assert(
      fc.asyncProperty(behaviour, async (b) => {
        const { url, upgrades } = await serve((ws) => {
          if (b.kind === 'close') ws.close();
          else if (b.kind === 'terminate') ws.terminate();
          else if (b.kind === 'close-later') setTimeout(() => ws.close(), b.afterMs);
          else if (b.kind === 'oversize') ws.send(Buffer.alloc(2 * 1024 * 1024));
          else if (b.kind === 'frame-then-close') {
            ws.send(JSON.stringify({ code: 'finished', description: '', data: '{}' })); // a frame proves nothing yet
            setTimeout(() => ws.close(), b.afterMs);
          } else {
            ws.send(Buffer.alloc(2 * 1024 * 1024, 0x7b)); // an oversized frame proves nothing
            setTimeout(() => ws.close(), b.afterMs);
          }
        });
        const c = new LiquidHandlerClient({ baseUrl: url, events: timings });
        open.push(c);
        c.events.onEvents(() => undefined);
        const windowMs = 1000;
        const started = Date.now();
        await until(() => Date.now() - started >= windowMs, 'the window', 10000);
        const seen = upgrades();
        await c.close();
        assert.ok(seen <= bound(windowMs + 50), `${b.kind}: ${seen} upgrades in ${windowMs} ms, bound ${bound(windowMs + 50)}`);
      }),
      { numRuns: 10, examples: [[{ kind: 'frame-then-close', afterMs: 0 }]] },
    );
  });

  /**
   * A socket with a frame every 5 ms and no pong ever (ping interval PING_MS): its state changes and frames so far.
   * `apart`: the instrument in a process of its own, so that it goes on sending while this process stalls.
   */
  async function chattyWithoutPongs(apart = false): Promise<{ changes: string[]; frames: () => number }> {
    const url = apart ? await instrumentApart() : (await serve(sendEvery5ms, false)).url;
    const c = new LiquidHandlerClient({ baseUrl: url, events: { ...timings, pingIntervalMs: PING_MS } });
    open.push(c);
    const changes: string[] = [];
    c.events.onState((change) => changes.push(change.state));
    let frames = 0;
    c.events.onEvents(() => frames++);
    return { changes, frames: () => frames };
  }

  function sendEvery5ms(ws: WebSocket): void {
    const timer = setInterval(() => ws.send(JSON.stringify({ code: 'maintenancedata', description: '', data: '{}' })), 5);
    ws.on('close', () => clearInterval(timer));
  }

  // far above the frames' 5 ms, so that a sender starved of CPU on a busy machine still sends within one interval
  const PING_MS = 150;
  const children: ChildProcess[] = [];
  afterEach(function () {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  /** The same instrument (a frame every 5 ms, no pong) in a child process; resolves with its URL. */
  async function instrumentApart(): Promise<string> {
    const script = `
      const { WebSocketServer } = require('ws');
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
      wss.on('connection', (ws) => {
        const timer = setInterval(() => ws.send(JSON.stringify({ code: 'maintenancedata', description: '', data: '{}' })), 5);
        ws.on('close', () => clearInterval(timer));
        ws.on('error', () => ws.terminate());
      });
      wss.on('listening', () => console.log(String(wss.address().port)));
    `;
    const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
      child.once('exit', (code) => reject(new Error(`the instrument process ended (${String(code)})`)));
    });
    return `http://127.0.0.1:${port}`;
  }

  it('keeps a socket that delivers frames although the instrument never answers pings', async function () {
    const { changes, frames } = await chattyWithoutPongs();
    // frames at one per 5 ms for ten ping intervals without a single pong
    await until(() => frames() >= (10 * PING_MS) / 5, 'ten intervals of frames', 20000);
    assert.deepEqual(changes, ['connected'], 'never dropped');
  });

  it('keeps that socket through event-loop stalls (a busy Node-RED): frames read after a stall count', async function () {
    const { changes, frames } = await chattyWithoutPongs(true);
    await until(() => frames() >= 5, '5 frames', 20000);
    // four stalls of three ping intervals each while the instrument goes on sending: the ping timer is due when each
    // ends, before the frames that arrived meanwhile are read
    for (let i = 0; i < 4; i++) {
      const end = Date.now() + 3 * PING_MS;
      while (Date.now() < end); // a synchronous stall, as a heavy flow makes
      await new Promise((r) => setTimeout(r, 3));
    }
    const before = frames();
    await until(() => frames() >= before + 20, '20 more frames', 20000);
    assert.deepEqual(changes, ['connected'], 'never dropped');
  });
});
