/**
 * Review62 model (sessions): 8 requests at once, reads and writes, while the token expires on the way (the simulator
 * answers each after a latency that may outlast the token), is due for renewal, has lapsed, or was ended on the
 * instrument (every token seen so far logged out: a restart or a logout on its screen). Simulated time, real HTTP.
 *
 * Invariants per burst: every request is answered (nobody is told "401" for a token the client let lapse); the
 * password is posted at most twice (a renewal, and a login when the instrument refuses the token the renewal carried)
 * and at most one login; each request is sent at most twice (a second time only after a 401); a write reached the
 * instrument's handler at most once. LH_SEED replays, LH_CASES extends.
 */
import assert from 'node:assert/strict';
import http from 'node:http';

import FakeTimers from '@sinonjs/fake-timers';

import { LiquidHandlerClient } from '../../src/client';
import { Simulator } from '../../src/simulator';
import type { LoggedRequest } from '../../src/simulator/types';
import { useSimulatorInTransit } from '../support/http-transit';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;
const CREDENTIAL_PATH = /^\/api\/v1\/authenticate(\/renew-token)?$/;

type Seen = Pick<LoggedRequest, 'method' | 'path' | 'status' | 'authorization'>;

describe('review: a token expiring under 8 concurrent requests (seeded model)', function () {
  this.timeout(60000);
  const sim = new Simulator();
  const transit = useSimulatorInTransit(sim);
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  let client: LiquidHandlerClient | undefined;
  let seen: Seen[] = [];
  let stop = (): void => undefined;

  beforeEach(function () {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    seen = [];
    // the log's own entries: each gets its status when answered
    stop = sim.onRequest((r) => void seen.push(r));
  });
  afterEach(async function () {
    stop();
    sim.clearFaults();
    // closed on the simulated clock: a request the simulator holds (latency) ends on it
    let closed = false;
    const closing = (client?.close() ?? Promise.resolve()).finally(() => (closed = true));
    for (let i = 0; !closed && i < 120; i++) await advance(1000);
    await closing;
    client = undefined;
    clock?.uninstall();
    clock = undefined;
    sim.reset();
  });

  /** Lets real I/O finish: nothing on the wire between the client and the simulator (a held request is not). */
  async function settle(): Promise<void> {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    for (let i = 0; transit.inTransit > 0 && i < 5000; i++) {
      await new Promise((r) => realSetTimeout(r, 2));
    }
  }

  /** Advances simulated time by `ms` a second at a time, real I/O settled before each step. */
  async function advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 1000) {
      await settle();
      await clock!.tickAsync(Math.min(1000, left));
    }
    await settle();
  }

  /** Logs out every token the instrument issued so far, as a restart or a logout on its screen ends them. */
  async function endEverySession(): Promise<void> {
    const tokens = new Set(seen.map((s) => s.authorization).filter((a): a is string => Boolean(a)));
    for (const authorization of tokens) {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          `${sim.baseUrl}/api/v1/authenticate`,
          { method: 'DELETE', headers: { authorization } },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end();
      });
    }
    seen = seen.filter((s) => !(s.method === 'DELETE' && s.path === '/api/v1/authenticate'));
  }

  for (let n = 0; n < CASES; n++) {
    it(`case ${n}: bursts of 8 through expiry, renewal, lapse and ended sessions`, async function () {
      const seed = SEED + n;
      const rng = new Rng(seed);
      console.log(`      token model seed: ${seed} (LH_SEED=${seed} replays it)`);
      client = new LiquidHandlerClient({ baseUrl: sim.baseUrl, timeoutMs: 60_000, credentials: { ...USER } });
      const c = client;
      let lastEnded = -Infinity;
      for (let round = 0; round < 8; round++) {
        // somewhere in the 5-minute token's life: fresh, near its renewal (15 s before the end), past it, lapsed
        const gap = rng.pick([0, 1000, 100_000, 280_000, 284_000, 290_000, 299_000, 301_000, 400_000]);
        await advance(gap);
        const ended = Date.now() - lastEnded >= 10_000 && rng.chance(0.3);
        if (ended) {
          sim.clearFaults(); // the logouts themselves answered at once
          await endEverySession();
          lastEnded = Date.now();
        }
        const latencyMs = rng.pick([0, 0, 2000, 9000, 16_000, 25_000]);
        sim.setFaults(latencyMs > 0 ? { latencyMs } : {});
        const from = seen.length;
        const kinds = Array.from({ length: 8 }, () => (rng.chance(0.3) ? 'write' : 'read'));
        const about = `seed ${seed} round ${round}: gap ${gap} ms, ended ${ended}, latency ${latencyMs} ms, ${kinds.join(' ')}`;
        const outcomes = kinds.map((k) =>
          (k === 'write' ? c.prep.clearErrors() : c.prep.pendingErrors()).then(
            () => undefined,
            (err: Error) => err,
          ),
        );
        const all = Promise.all(outcomes);
        let settled = false;
        void all.then(() => (settled = true));
        for (let i = 0; !settled && i < 400; i++) {
          await advance(1000);
        }
        const errors = (await all).filter((e): e is Error => e !== undefined);
        assert.deepEqual(
          errors.map((e) => e.message),
          [],
          about,
        );
        const burst = seen.slice(from);
        const credentials = burst.filter((s) => s.method === 'POST' && CREDENTIAL_PATH.test(s.path));
        const logins = credentials.filter((s) => s.path === '/api/v1/authenticate');
        assert.ok(credentials.length <= 2, `${about}: ${credentials.length} password posts`);
        assert.ok(logins.length <= 1, `${about}: ${logins.length} logins`);
        if (process.env.LH_DEBUG)
          console.log(
            `        ${about}: ${burst.map((b) => `${b.method} ${b.path.replace('/api/v1/', '')} ${b.status}`).join(', ')}`,
          );
        const writes = burst.filter((s) => s.path === '/api/v1/errors/clear-errors');
        const reads = burst.filter((s) => s.path === '/api/v1/errors/check-for-pending-errors');
        const fired = { write: kinds.filter((k) => k === 'write').length, read: kinds.filter((k) => k === 'read').length };
        for (const [list, count, name] of [
          [writes, fired.write, 'writes'],
          [reads, fired.read, 'reads'],
        ] as const) {
          const refused = list.filter((s) => s.status === 401).length;
          assert.ok(list.length <= 2 * count, `${about}: ${list.length} ${name} sent for ${count}`);
          assert.equal(list.length - refused, count, `${about}: ${name} handled ${list.length - refused} times for ${count}`);
        }
      }
    });
  }
});
