/**
 * The event socket's heartbeat (src/client/events.ts) against the wall clock set back (an NTP step, a VM resumed):
 * a peer that stops answering afterwards (a half-open connection: the instrument gone without a FIN) must still be
 * dropped at the next ping interval and the socket reconnected, not after the step's length. Until then the node
 * hears no instrument event (errors included) and its status says connected.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';

import FakeTimers from '@sinonjs/fake-timers';
import type { WebSocket } from 'ws';

import { type EventStateChange, LiquidHandlerClient } from '../../src/client';
import { useWsServers } from '../support/ws-servers';

const realSetTimeout = setTimeout;

describe('review: the event heartbeat after the wall clock steps back', function () {
  const sockets = useWsServers();
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  for (const back of [60_000, 3_600_000, 86_400_000]) {
    it(`drops a peer gone silent after the clock went back ${back / 60_000} min`, async function () {
      // Date only, advancing with real time: the heartbeat's own timers are real
      clock = FakeTimers.install({ toFake: ['Date'], shouldAdvanceTime: true, advanceTimeDelta: 1 });
      const { url, wss } = await sockets.listen(true);
      let peer: WebSocket | undefined;
      let pings = 0;
      wss.on('connection', (ws) => {
        peer = ws;
        ws.on('ping', () => pings++);
      });
      const c = new LiquidHandlerClient({
        baseUrl: url,
        events: { reconnectInitialMs: 10_000, reconnectMaxMs: 10_000, random: () => 0.5, pingIntervalMs: 20 },
      });
      sockets.open.push(c);
      const states: EventStateChange['state'][] = [];
      c.events.onState((change) => {
        if (change.channel === 'events') states.push(change.state);
      });
      c.events.onEvents(() => undefined);
      for (let i = 0; i < 400 && pings < 3; i++) await new Promise((r) => realSetTimeout(r, 5));
      assert.ok(pings >= 3, 'pinged and answered');
      assert.deepEqual(states, ['connected']);
      clock.setSystemTime(Date.now() - back);
      // the instrument gone without a word: its socket reads nothing more, so no pong
      (peer as unknown as { _socket: Socket })._socket.pause();
      for (let i = 0; i < 200 && !states.includes('disconnected'); i++) await new Promise((r) => realSetTimeout(r, 5));
      assert.ok(states.includes('disconnected'), `dropped within 1 s, not after the step: ${states.join(', ')}`);
    });
  }
});
