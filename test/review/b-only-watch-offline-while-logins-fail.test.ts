/**
 * Review70 finding (reachability, pre-existing): interface B's requests go through the session when the instrument
 * has no token of its own, so while every login got no answer (a reset, a 5xx) each B request failed at its login,
 * and that login (or the request held back in its place) was counted on A only. A node that watches B alone (an error
 * poll of source B) kept its view "unknown": its status never said offline and its third output never sent
 * `offline`, however long the instrument was away; only the lh-server's line (interfaces A) said so.
 *
 * Seeded model (simulated time, real HTTP to the simulator): one lh-server's client and its connection state, a
 * watcher of B alone (Offline after 2–4) asking B every 0.5–2 s while every login fails (reset, 502 or 503) for
 * 30 s, then the instrument answers. Invariants: the watcher's own view turns offline during the outage, and online
 * once B answers again. LH_SEED replays a run, LH_CASES extends it.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LiquidHandlerClient } from '../../src/client';
import { type ConnectionView } from '../../src/nodes/shared/connection-state';
import { ServerConnection } from '../../src/nodes/shared/server-connection';
import { Simulator } from '../../src/simulator';
import { useSimulatorInTransit } from '../support/http-transit';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;

describe('review: a watcher of interface B alone goes offline while every login fails', function () {
  this.timeout(30000);
  const sim = new Simulator();
  const transit = useSimulatorInTransit(sim);
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  let client: LiquidHandlerClient | undefined;
  let connection: ServerConnection | undefined;

  afterEach(async function () {
    clock?.uninstall();
    clock = undefined;
    connection?.close();
    await client?.close();
    sim.reset();
  });

  for (let n = 0; n < CASES; n++) {
    it(`case ${n}: B asked every 0.5–2 s through 30 s of failing logins (seeded)`, async function () {
      const seed = SEED + n;
      const rng = new Rng(seed);
      const everyMs = rng.pick([500, 1000, 2000]);
      const offlineAfter = rng.int(2, 4);
      const fault = rng.pick(['reset', '502', '503'] as const);
      const about = `seed ${seed} (LH_SEED=${seed} replays it): B every ${everyMs} ms, offline after ${offlineAfter}, ${fault}`;
      console.log(`      ${about}`);
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      connection = new ServerConnection();
      const own: ConnectionView['state'][] = [];
      const unsubscribe = connection.subscribe({ apis: ['B'], offlineAfter, onChange: (_view, mine) => own.push(mine.state) });
      client = new LiquidHandlerClient({
        baseUrl: sim.baseUrl,
        instrumentUrl: sim.instrumentUrl,
        tls: { ca: sim.ca },
        timeoutMs: 1000,
        retryBaseDelayMs: 10,
        credentials: { ...USER },
      });
      connection.attach(client);
      const c = client;
      const ask = async (ms: number): Promise<number> => {
        let failed = 0;
        for (let t = 0; t < ms; t += everyMs) {
          const p = c.instrument.unhandledErrors().then(
            () => undefined,
            () => void failed++,
          );
          await transit.quiet(p, realSetTimeout);
          await p;
          await clock!.tickAsync(everyMs);
        }
        return failed;
      };
      try {
        sim.setFaults(
          fault === 'reset'
            ? { resetRate: 1, methods: ['POST'] }
            : { statusRate: 1, statusCode: Number(fault), methods: ['POST'] },
        );
        const failed = await ask(30_000);
        assert.ok(failed >= 10, `${about}: B's requests failed at the login (${failed})`);
        assert.equal(connection.view(['B'], offlineAfter).state, 'offline', `${about}: B shows offline (${own.join(', ')})`);
        sim.clearFaults();
        await ask(70_000);
        assert.equal(connection.view(['B'], offlineAfter).state, 'online', `${about}: B online again (${own.join(', ')})`);
        assert.equal(own.at(-1), 'online', about);
      } finally {
        unsubscribe();
      }
    });
  }
});
