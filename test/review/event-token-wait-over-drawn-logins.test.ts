/**
 * Review (review99's token wait: an upgrade waits at most 2 s for the session's token, then connects without one).
 * The wait's 2 s timer outlived a close or a redeploy that came during it: the stopped connection's attempt waited
 * on, a timer of a closed client left planned (the redeploy soak rule: nothing left behind).
 *
 * Property over drawn logins and instruments (seeded: LH_SEED replays, LH_CASES draws more), on a fake clock with real
 * sockets on loopback: the login answers a token soon (within the wait), late (after it), fails, or hangs; the
 * instrument accepts sockets without a token or refuses them (401); the client is closed at a drawn moment, during
 * the first wait or later. Invariants: no timer of the client is left once close() resolved, and no upgrade reaches
 * the instrument after it; the first upgrade offers the token exactly when the login answered within the wait, and
 * comes within the wait; once the login answered, every later upgrade offers its token; an instrument refusing
 * sockets without a token sees its attempts spaced by the back-off (at most 8 in 20 s, never 2 within 20 ms); the token
 * never appears in a state change's reason.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import FakeTimers from '@sinonjs/fake-timers';
import { WebSocketServer } from 'ws';

import { type EventStateChange, InstrumentEvents } from '../../src/client';
import { DEFAULT_TOKEN_WAIT_MS } from '../../src/client/events';
import { Rng } from '../support/prng';
import { closeWsServer } from '../support/ws-servers';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZXZpZXcxMDAifQ.c2VjcmV0LXRva2Vu';

type Login = 'soon' | 'late' | 'fails' | 'hangs';

function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const end = performance.now() + ms;
    const turn = (): void => {
      if (performance.now() >= end) resolve();
      else setImmediate(turn);
    };
    setImmediate(turn);
  });
}

describe(`review: the event socket's token wait over drawn logins (fake clock, seed ${SEED})`, function () {
  this.timeout(60_000);

  for (let c = 0; c < CASES; c++) {
    it(`case ${c}: no timer left, the token offered once there, attempts spaced`, async function () {
      const rng = new Rng(SEED * 31 + c);
      // the first case: a close during the wait of an attempt whose login hangs (the case the wait's timer outlived)
      const login = c === 0 ? 'hangs' : rng.pick<Login>(['soon', 'late', 'fails', 'hangs']);
      const answerMs = login === 'soon' ? rng.int(0, DEFAULT_TOKEN_WAIT_MS - 200) : rng.int(DEFAULT_TOKEN_WAIT_MS + 200, 10_000);
      const refuses = rng.chance(0.5);
      const during = rng.int(0, DEFAULT_TOKEN_WAIT_MS - 100);
      const closeAtMs = c === 0 ? during : rng.pick([during, rng.int(2500, 20_000)]);
      const label = `seed ${SEED} case ${c}: login ${login} at ${answerMs} ms, ${refuses ? 'refuses' : 'accepts'} tokenless, close at ${closeAtMs} ms`;

      const server = http.createServer();
      const wss = new WebSocketServer({ noServer: true });
      const upgrades: { at: number; authorization?: string }[] = [];
      let closedAt = Infinity;
      server.on('upgrade', (req, socket, head) => {
        upgrades.push({ at: Date.now(), authorization: req.headers.authorization });
        if (refuses && !req.headers.authorization)
          return socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        wss.handleUpgrade(req, socket, head, (ws) => ws.on('error', () => ws.terminate()));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

      const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      const start = Date.now();
      const mine: ReturnType<typeof setTimeout>[] = [];
      let answered = false;
      /** the session's login, asked by every attempt: one login, answered (or not) at answerMs */
      let pending: Promise<string | undefined> | undefined;
      const token = (): Promise<string | undefined> => {
        if (answered && login !== 'fails') return Promise.resolve(TOKEN);
        pending ??= new Promise<string | undefined>((resolve, reject) => {
          if (login === 'hangs') return;
          mine.push(
            setTimeout(() => {
              answered = true;
              pending = undefined;
              if (login === 'fails') reject(new Error('login failed'));
              else resolve(TOKEN);
            }, answerMs),
          );
        });
        return pending;
      };
      const events = new InstrumentEvents({ baseUrl: url, token });
      const changes: EventStateChange[] = [];
      events.on('state', (change: EventStateChange) => changes.push(change));
      try {
        const off = events.onErrors(() => undefined);
        while (Date.now() - start < closeAtMs) {
          clock.tick(Math.min(5, closeAtMs - (Date.now() - start)));
          await realSleep(1);
        }
        off();
        closedAt = Date.now();
        await events.close();
        for (const t of mine) clearTimeout(t);
        await realSleep(5);
        assert.equal(clock.countTimers(), 0, `timers left after close: ${label}`);
        clock.tick(30_000);
        await realSleep(5);
        assert.deepEqual(
          upgrades.filter((u) => u.at > closedAt).map((u) => u.at - start),
          [],
          `upgrades after close: ${label}`,
        );
        if (closeAtMs >= DEFAULT_TOKEN_WAIT_MS + 50) {
          const first = upgrades[0];
          assert.ok(first !== undefined, `an upgrade within the wait: ${label}`);
          assert.ok(first.at - start <= DEFAULT_TOKEN_WAIT_MS + 20, `the first upgrade within the wait: ${label}`);
          assert.equal(first.authorization, login === 'soon' ? `Bearer ${TOKEN}` : undefined, `first upgrade: ${label}`);
        }
        if (login === 'soon' || login === 'late') {
          for (const u of upgrades.filter((x) => x.at - start > answerMs + 5))
            assert.equal(u.authorization, `Bearer ${TOKEN}`, `an upgrade after the login answered: ${label}`);
        }
        if (refuses) {
          const early = upgrades.filter((u) => u.at - start <= 20_000);
          assert.ok(early.length <= 8, `${early.length} attempts in 20 s: ${label}`);
          for (let i = 1; i < early.length; i++) assert.ok(early[i].at - early[i - 1].at >= 20, `attempts spaced: ${label}`);
        }
        for (const change of changes) assert.ok(!(change.reason ?? '').includes(TOKEN), `the token in a reason: ${label}`);
      } finally {
        clock.uninstall();
        await closeWsServer(server, wss);
      }
    });
  }
});
