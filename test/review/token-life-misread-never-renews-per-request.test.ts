/**
 * Review (tokenLifetimeMs, review99's nbf bound; the renewal never in a tight loop). A token without `iat` (ASP.NET's
 * JwtSecurityToken: nbf and exp in whole seconds) was read to live exp - now by this host's clock, at most exp - nbf.
 * With this host's clock ahead of the instrument's by most of the token's life (a host that lost its time server and
 * drifted, a VM restored), a fresh 5-minute token read as living what was left by this host's clock: ahead by
 * 271 s, the password was sent 24 times in ten minutes; ahead by 299 s, a second or less, with every request. A claim in fractions of a second (exp - iat = 0.01) did the same; an exp beyond what a number holds (1e400)
 * read as a life of Infinity.
 *
 * 1. Property over drawn claims (seeded: LH_SEED replays, LH_CASES draws more): iat, nbf (before, after exp), exp (past,
 *    future, huge, fractional, non-finite), expiresIn, clock skews either way. Every reading is a finite number
 *    between 1 s and a day, never more than exp - nbf where nbf < exp (the token's own life), and never less than
 *    half of it for a fresh token whatever this host's clock says.
 * 2. Model, end to end on the simulator (HTTPS-free A, real HTTP, fake clock): the simulator issues nbf tokens by a
 *    clock behind this host's by 250-299 s of their 300 s life; a request every 5 s for 10 minutes sends the password
 *    at most 6 times, and no request meets a 401 (the token is never used past its life).
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { LiquidHandlerClient } from '../../src/client';
import { MAX_READ_LIFETIME_MS, MIN_READ_LIFETIME_MS, tokenLifetimeMs } from '../../src/client/session';
import type { AuthResult } from '../../src/client/types';
import { Simulator } from '../../src/simulator';
import { HttpTransit } from '../support/http-transit';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 500;
const MODEL_CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;
const realSetTimeout = setTimeout;

/** A JWT whose payload is `payload` as written (a number such as 1e400 kept as text). */
function jwt(payload: string): string {
  const part = (s: string): string => Buffer.from(s).toString('base64url');
  return `${part('{"alg":"HS256","typ":"JWT"}')}.${part(payload)}.c2lnbmF0dXJl`;
}

function drawClaim(rng: Rng, around: number): string | undefined {
  return rng.pick<string | undefined>([
    undefined,
    String(around),
    String(around + rng.int(-7200, 7200)),
    String(around + rng.int(-3, 3) / 100),
    '1e400',
    '-1e400',
    String(around * 1e12),
    'null',
    '"soon"',
  ]);
}

describe('review: a misread token life never renews with every request', function () {
  this.timeout(60000);

  it(`every reading is finite, 1 s to a day, within the token's life and at least half of it (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const issuedAt = 1_790_000_000 + rng.int(0, 10_000_000); // the instrument's clock at issue, s
      const life = rng.pick([rng.int(1, 3600), 300, rng.int(1, 100) / 100]);
      const claims: Record<string, string | undefined> = {
        iat: rng.chance(0.4) ? drawClaim(rng, issuedAt) : undefined,
        nbf: rng.chance(0.6) ? drawClaim(rng, issuedAt) : undefined,
        exp: rng.chance(0.9) ? rng.pick([String(issuedAt + life), drawClaim(rng, issuedAt + life)]) : undefined,
      };
      const payload = `{${Object.entries(claims)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `"${k}":${v}`)
        .join(',')}}`;
      const skewS = rng.pick([0, rng.int(-7200, 7200), rng.int(0, Math.ceil(life)), rng.int(-30, 30)]); // host - instrument
      const now = (issuedAt + skewS) * 1000;
      const expiresIn = rng.pick([undefined, 5, 0, -1, 1e-9, 1e300]);
      const result = { token: jwt(payload), ...(expiresIn !== undefined ? { expiresIn } : {}) } as AuthResult;
      const read = tokenLifetimeMs(result, now);
      const label = `seed ${SEED} case ${c}: ${payload}, expiresIn ${String(expiresIn)}, skew ${skewS} s: read ${String(read)}`;
      if (read === undefined) continue;
      assert.ok(Number.isFinite(read), label);
      assert.ok(read >= MIN_READ_LIFETIME_MS && read <= MAX_READ_LIFETIME_MS, label);
      const parsed = JSON.parse(payload) as Record<string, unknown>;
      const num = (k: string): number | undefined =>
        typeof parsed[k] === 'number' && Number.isFinite(parsed[k]) ? (parsed[k] as number) : undefined;
      const [iat, nbf, exp] = [num('iat'), num('nbf'), num('exp')];
      if (exp !== undefined && iat === undefined && nbf !== undefined && exp > nbf) {
        const own = (exp - nbf) * 1000;
        const bounded = (ms: number): number => Math.min(MAX_READ_LIFETIME_MS, Math.max(MIN_READ_LIFETIME_MS, ms));
        assert.ok(read <= bounded(own), `never longer than exp - nbf: ${label}`);
        assert.ok(read >= bounded(own / 2), `never less than half of exp - nbf: ${label}`);
      }
    }
  });

  for (let n = 0; n < MODEL_CASES; n++) {
    it(`model ${n}: a host clock ahead by most of a token's life sends the password a few times, not per request`, async function () {
      const rng = new Rng(SEED + 100 + n);
      const aheadS = n === 0 ? 299 : rng.int(250, 298); // the first: the token read to live a second at most
      console.log(`      token life model seed: ${SEED} (LH_SEED replays it): host ahead by ${aheadS} s`);
      const sim = new Simulator({ tokenClaims: 'nbf', clockOffsetMs: -aheadS * 1000, tokenLifetimeSeconds: 300 });
      await sim.start();
      const transit = new HttpTransit(Number(new URL(sim.baseUrl).port));
      // half a second into a second: a token's nbf, in whole seconds, is half a second before its issue
      const clock = FakeTimers.install({
        now: 1_790_000_000_500,
        toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
      });
      const client = new LiquidHandlerClient({ baseUrl: sim.baseUrl, timeoutMs: 60_000, credentials: { ...USER } });
      const settle = async (): Promise<void> => {
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        for (let i = 0; transit.inTransit > 0 && i < 5000; i++) await new Promise((r) => realSetTimeout(r, 2));
      };
      try {
        for (let t = 0; t < 600_000; t += 5000) {
          const asked = client.prep.pendingErrors();
          await transit.quiet(asked, realSetTimeout);
          await asked;
          // in steps, each request (a renewal on its timer) answered before time goes on, as on a real clock
          for (let step = 0; step < 20; step++) {
            await settle();
            await clock.tickAsync(250);
          }
          await settle();
        }
        const posts = sim.requests.filter((r) => r.method === 'POST' && /^\/api\/v1\/authenticate(\/renew-token)?$/.test(r.path));
        const refused = sim.requests.filter((r) => r.status === 401);
        const about = `seed ${SEED}, ahead ${aheadS} s: ${posts.length} password posts, ${refused.length} 401s`;
        assert.ok(posts.length <= 6, about);
        assert.equal(refused.length, 0, about);
      } finally {
        const closing = client.close();
        for (let i = 0; i < 60; i++) {
          await settle();
          await clock.tickAsync(1000);
        }
        await closing;
        clock.uninstall();
        transit.close();
        await sim.stop();
      }
    });
  }
});
