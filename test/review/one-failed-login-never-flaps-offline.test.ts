/**
 * Review70 finding (reachability): a login that got no answer (a reset) spaces the next login out by 1 s, and every
 * request meanwhile is held back (57691dc: `Transport.heldBack` tells the reachability observers of each as a failure
 * sending it would have met). Each held-back request counted as one more unanswered request of its own, though it is
 * only the one failed login seen again: nodes polling through one lh-server (several error polls and run watches,
 * every 0.2–0.5 s between them) turned a single reset login of an instrument answering everything else into
 * "offline" (a msg on every node's third output, the lh-server's warning) and "online" a second later.
 *
 * Seeded model (simulated time, real HTTP to the simulator): one lh-server's client and its connection state, its
 * nodes' requests every 150–450 ms; the first login fails (reset), then the instrument answers. Invariant: the
 * instrument never shows offline (Offline after 2–4). LH_SEED replays a run, LH_CASES extends it.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LiquidHandlerClient } from '../../src/client';
import { type Reachable, ServerConnection } from '../../src/nodes/shared/server-connection';
import { Simulator } from '../../src/simulator';
import { useSimulatorInTransit } from '../support/http-transit';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

describe('review: one login without an answer never turns a healthy instrument offline', function () {
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
    it(`case ${n}: requests every 150–450 ms through one reset login (seeded)`, async function () {
      const seed = SEED + n;
      const rng = new Rng(seed);
      const everyMs = rng.int(150, 450);
      const offlineAfter = rng.int(2, 4);
      const about = `seed ${seed} (LH_SEED=${seed} replays it): a request every ${everyMs} ms, offline after ${offlineAfter}`;
      console.log(`      ${about}`);
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      const told: Reachable[] = [];
      connection = new ServerConnection(undefined, (change) => told.push(change));
      const unsubscribe = connection.subscribe({ apis: ['A'], offlineAfter, onChange: () => undefined });
      client = new LiquidHandlerClient({ baseUrl: sim.baseUrl, timeoutMs: 1000, retryBaseDelayMs: 10, credentials: { ...USER } });
      connection.attach(client);

      let logins = 0;
      const stop = sim.onRequest((r) => {
        if (r.method === 'POST' && r.path === '/api/v1/authenticate') logins++;
      });
      sim.setFaults({ resetRate: 1, methods: ['POST'] });
      const failures: string[] = [];
      try {
        for (let t = 0; t < 4000; t += everyMs) {
          const p = client.prep.pendingErrors().then(
            () => undefined,
            (err: Error) => void failures.push(err.message),
          );
          await transit.quiet(p, realSetTimeout);
          await p;
          if (logins > 0) sim.clearFaults(); // the first login got no answer; the instrument answers from now on
          await clock.tickAsync(everyMs);
        }
      } finally {
        stop();
        unsubscribe();
      }
      assert.ok(failures.length >= 2, `${about}: the reset login and requests held back after it failed (${failures.length})`);
      assert.ok(logins >= 2, `${about}: a later login went (${logins})`);
      assert.deepEqual(told, [], `${about}: one failed login is not an outage`);
      assert.equal(connection.view(['A'], offlineAfter).state, 'online', about);
    });
  }
});
