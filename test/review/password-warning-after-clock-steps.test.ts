/**
 * The password-expiry warning (at most once a day: the session's 'password-warning' event, then each listener's own
 * gate in the instrument's home, which lh-error-poll sends on its connection output, often wired to e-mail) against
 * the wall clock stepping. A clock behind the last warning warned at every login (a clock jittering back 1 ms per
 * reading: a warning per token renewal). Drawn clock histories over real logins to the simulator (steps back and
 * forward of minutes to days, 1 ms jitter, waits): warnings at least a day of elapsed time apart unless the clock
 * stepped forward. LH_SEED / LH_CASES replay or extend them.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import type { PasswordWarning } from '../../src/client';
import { resetHomes } from '../../src/instrument';
import { onPasswordWarning } from '../../src/nodes/shared/password-warning';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('review: the password-expiry warning after the wall clock steps', function () {
  this.timeout(30000);
  // the password expires in 5 days: every login says a warning is due
  const suite = useClients({ policy: { passwordExpires: 5 } });
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  /** the simulator's sessions (tokens it issued), to revoke them */
  const simSessions = (): Map<string, { revoked: boolean }> =>
    (suite.sim as unknown as { services: { auth: { sessions: Map<string, { revoked: boolean }> } } }).services.auth.sessions;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    resetHomes();
  });

  it(`warns about once a day of elapsed time, whatever the clock did (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      clock?.uninstall();
      clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-24T10:00:00.000Z') });
      resetHomes();
      const client = suite.make();
      let elapsed = 0;
      /** when each warned (elapsed ms), and whether the clock stepped forward since its previous warning */
      type Warned = { at: number; forward: boolean };
      const session: Warned[] = [];
      const listened: Warned[] = [];
      let forwardSince = { session: false, listener: false };
      client.session.on('password-warning', () => {
        session.push({ at: elapsed, forward: forwardSince.session });
        forwardSince.session = false;
      });
      const off = onPasswordWarning(
        client,
        (_w: PasswordWarning) => {
          listened.push({ at: elapsed, forward: forwardSince.listener });
          forwardSince.listener = false;
        },
        'poll',
      );
      const trace: string[] = [];
      for (let i = 0; i < 40; i++) {
        const what = rng.weighted({ login: 6, wait: 4, back: 1, forward: 1, jitter: 4 });
        if (what === 'login') {
          // the instrument ends the session (a restart of it, a token revoked): the next request logs in again
          clock.tick(15_000); // past the client's spacing of logins after a refused token
          elapsed += 15_000;
          for (const held of simSessions().values()) held.revoked = true;
          await client.prep.pendingErrors();
          trace.push('login');
        } else if (what === 'wait') {
          const ms = rng.pick([5 * MIN, HOUR, 6 * HOUR]);
          clock.tick(ms);
          elapsed += ms;
          trace.push(`wait ${ms}`);
        } else {
          const by = what === 'jitter' ? -1 : (what === 'back' ? -1 : 1) * rng.pick([MIN, HOUR, DAY, 3 * DAY]);
          if (what === 'forward') forwardSince = { session: true, listener: true };
          clock.setSystemTime(Date.now() + by);
          trace.push(`${what} ${by}`);
        }
      }
      off();
      for (const [name, warned] of [
        ['session', session],
        ['listener', listened],
      ] as const) {
        const where = `seed ${SEED} case ${c}, ${name} warned at ${warned.map((w) => w.at).join(', ')}: ${trace.join(', ')}`;
        assert.ok(warned.length > 0, `never warned; ${where}`);
        // a step forward may bring the next warning early; nothing else may (a step back, jitter)
        for (let i = 1; i < warned.length; i++)
          if (!warned[i].forward) assert.ok(warned[i].at - warned[i - 1].at >= DAY - 1000, `warned again; ${where}`);
      }
    }
  });
});
