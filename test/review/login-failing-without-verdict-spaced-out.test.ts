/**
 * Review62 finding (logins, lockout): a login that failed without a verdict on the password (a 5xx, a reset, a
 * timeout) was not held back, so every poll of every node sent the password again: an instrument answering its login
 * 503 (starting up, its user store failing) got one login a poll, 120 a minute from one error poll at 0.5 s, and each
 * may be counted as a failed attempt by an instrument that locks after a few. Now such failures space the instrument's
 * logins with those credentials out in this Node-RED (its home's login gate): the next after 1 s, then 2 s, 4 s, ...
 * at most 60 s apart (at most 6 a minute, then one a minute); a request meanwhile fails at once saying when the next
 * login goes. Once the fault clears every session logs in by itself, within a minute, without a redeploy.
 *
 * Seeded model (simulated time, real HTTP to the simulator): 1–3 sessions of one instrument and user (several
 * lh-server nodes share the gate) poll every 0.5–2 s while every login fails (503, 500, 502 or a reset) for 2–4
 * minutes. Invariants: at most 6 password posts in any 60 s, at most one a minute after the first two minutes, and
 * every session polls successfully again within 65 s of the fault clearing. LH_SEED replays a run, LH_CASES extends it.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { type LhError, LiquidHandlerClient, ownBooks } from '../../src/client';
import { failureReason } from '../../src/nodes/shared/status';
import { Simulator } from '../../src/simulator';
import { useSimulatorInTransit } from '../support/http-transit';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';

const realSetTimeout = setTimeout;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;

describe('review: logins failing without a verdict are spaced out, and recover by themselves', function () {
  this.timeout(60000);
  const sim = new Simulator({ policy: { maximumLoginAttempts: 3 } });
  const transit = useSimulatorInTransit(sim);
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  const clients: LiquidHandlerClient[] = [];
  let posts: number[] = [];
  let stopListening = (): void => undefined;

  beforeEach(function () {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    posts = [];
    stopListening = sim.onRequest((r) => {
      if (r.method === 'POST' && /^\/api\/v1\/authenticate(\/renew-token)?$/.test(r.path)) posts.push(Date.now());
    });
  });
  afterEach(async function () {
    stopListening();
    clock?.uninstall();
    clock = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    sim.reset();
  });

  /** Polls pending errors with every client every `everyMs` (no overlap per client) for `ms`; failures by client. */
  async function poll(list: LiquidHandlerClient[], everyMs: number, ms: number): Promise<{ at: number; err: LhError }[][]> {
    const failures = list.map(() => [] as { at: number; err: LhError }[]);
    const inFlight: (Promise<void> | undefined)[] = list.map(() => undefined);
    for (let t = 0; t < ms; t += everyMs) {
      list.forEach((c, i) => {
        if (inFlight[i]) return;
        const at = Date.now();
        const p: Promise<void> = c.prep.pendingErrors().then(
          () => undefined,
          (err: unknown) => void failures[i].push({ at, err: err as LhError }),
        );
        inFlight[i] = p;
        void p.finally(() => {
          if (inFlight[i] === p) inFlight[i] = undefined;
        });
      });
      for (const p of inFlight) await transit.quiet(p, realSetTimeout);
      await clock!.tickAsync(everyMs);
    }
    for (let i = 0; inFlight.some(Boolean) && i < 60; i++) {
      for (const p of inFlight) await transit.quiet(p, realSetTimeout);
      await clock!.tickAsync(1000);
    }
    return failures;
  }

  /** The most password posts in any 60 s from `from` on. */
  function mostInAMinute(from: number): number {
    const times = posts.filter((t) => t >= from);
    let most = 0;
    for (const start of times) most = Math.max(most, times.filter((t) => t >= start && t < start + 60_000).length);
    return most;
  }

  for (let n = 0; n < CASES; n++) {
    it(`case ${n}: 1–3 sessions polling through 2–4 minutes of failing logins (seeded)`, async function () {
      const seed = SEED + n;
      const rng = new Rng(seed);
      const sessions = rng.int(1, 3);
      const everyMs = rng.pick([500, 1000, 2000]);
      const faultMs = rng.int(2, 4) * 60_000;
      const fault = rng.pick(['503', '500', '502', 'reset'] as const);
      const about = `seed ${seed} (LH_SEED=${seed} replays it): ${sessions} sessions, poll ${everyMs} ms, ${fault} for ${faultMs / 1000} s`;
      console.log(`      ${about}`);

      const books = ownBooks(); // the instrument's home: its lh-server nodes share its login gate
      const list = Array.from({ length: sessions }, () => {
        const c = new LiquidHandlerClient({
          baseUrl: sim.baseUrl,
          timeoutMs: 1000,
          retryBaseDelayMs: 10,
          credentials: { ...USER },
          books,
        });
        clients.push(c);
        return c;
      });
      sim.setFaults(
        fault === 'reset' ? { resetRate: 1, methods: ['POST'] } : { statusRate: 1, statusCode: Number(fault), methods: ['POST'] },
      );
      const start = Date.now();
      const during = await poll(list, everyMs, faultMs);
      assert.ok(posts.length >= 2, `${about}: logins went on being tried (${posts.length})`);
      assert.ok(mostInAMinute(start) <= 6, `${about}: ${mostInAMinute(start)} password posts in one minute`);
      assert.ok(mostInAMinute(start + 120_000) <= 1, `${about}: ${mostInAMinute(start + 120_000)} a minute after 2 minutes`);
      for (const f of during.flat()) {
        // every failure reads "instrument error" (a 5xx: the instrument failing; a reset: "instrument unreachable"), no secret
        assert.match(
          failureReason(f.err),
          /^(instrument error \(login 5\d\d, not resent\)|login failed \(no answer, not resent\)|instrument unreachable)$/,
          f.err.message,
        );
        assert.doesNotMatch(f.err.message, new RegExp(USER.password));
      }

      sim.clearFaults();
      const cleared = Date.now();
      const after = await poll(list, everyMs, 70_000);
      after.forEach((failures, i) => {
        const last = failures.at(-1);
        assert.ok(!last || last.at < cleared + 65_000, `${about}: session ${i} still failing at ${last && last.at - cleared} ms`);
      });
      assert.equal(sim.state.failedLogins, 0);
    });
  }
});
