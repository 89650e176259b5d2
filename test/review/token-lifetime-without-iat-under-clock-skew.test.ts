/**
 * Review (observed-instrument.md: a bearer JWT, HS256, living about 5 minutes; "prefer the JWT exp claim when
 * present"). A token without `iat` (ASP.NET's JwtSecurityToken sets `nbf` and `exp` only) was given the life
 * exp - now by this host's clock: a host clock behind the instrument's read a longer life than the token has (an hour
 * behind: an hour and five minutes), so the session renewed long after the instrument stopped taking the token, and
 * every request in between met a 401 first. With `nbf`, the life is now at most exp - nbf; a host clock ahead past
 * `exp` reads exp - nbf too (before: nothing, and expiresIn's guess).
 *
 * Property over drawn lifetimes and clock skews (seeded: LH_SEED replays, LH_CASES draws more): the life read is never
 * longer than the token's, and is exp - now exactly where that is the shorter (a host clock ahead, within the life).
 */
import assert from 'node:assert/strict';

import { tokenLifetimeMs } from '../../src/client/session';
import type { AuthResult } from '../../src/client/types';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;

function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

describe('review: the life of a token without iat, under clock skew', function () {
  it(`is never read longer than exp - nbf (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const life = rng.int(60, 3600); // s
      const issued = 1_790_000_000 + rng.int(0, 10_000_000); // the instrument's clock at issue, s
      const skew = rng.pick([0, rng.int(-7200, 7200), rng.int(-30, 30)]); // this host's clock minus the instrument's, s
      const result = {
        userName: 'admin',
        token: jwt({ nameid: 'ab'.repeat(16), role: ['HandleErrors'], nbf: issued, exp: issued + life }),
        ...(rng.chance(0.5) ? { expiresIn: 5 } : {}),
      } as AuthResult;
      const read = tokenLifetimeMs(result, (issued + skew) * 1000);
      const label = `seed ${SEED} case ${c}: life ${life} s, skew ${skew} s, read ${String(read)} ms`;
      assert.ok(read !== undefined && read > 0, label);
      assert.ok(read <= life * 1000, label);
      // a host clock ahead within the life: exp - now, yet at least half the life (review100: never a renewal per request)
      const expected = skew >= 0 && skew < life ? Math.max(life - skew, life / 2) * 1000 : life * 1000;
      assert.equal(read, expected, label);
    }
  });

  it('a token with iat reads exp - iat; one with neither iat nor nbf reads exp - now, as before', function () {
    assert.equal(tokenLifetimeMs({ token: jwt({ iat: 100, nbf: 50, exp: 400 }) } as AuthResult, 0), 300_000);
    assert.equal(tokenLifetimeMs({ token: jwt({ exp: 400 }) } as AuthResult, 100_000), 300_000);
    assert.equal(tokenLifetimeMs({ token: jwt({ exp: 400 }), expiresIn: 5 } as AuthResult, 500_000), 300_000);
  });
});
