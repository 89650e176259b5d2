import assert from 'node:assert/strict';
import { EventEmitter } from 'events';

import fc from 'fast-check';

import { describeExpiry, passwordExpiryOf, PasswordWarning, WARN_EVERY_MS, warnNow } from '../../src/client/password-expiry';
import { resetHomes } from '../../src/instrument';
import { onPasswordWarning } from '../../src/nodes/shared/password-warning';

const DAY = 24 * 60 * 60 * 1000;

describe('password expiry (from the login result)', function () {
  it('warns when the instrument says so, or from 14 days before expiry, and never without a day count', function () {
    assert.equal(passwordExpiryOf({ token: 't' }, 0), undefined);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 90 }, 0)?.warn, false);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 90, notifyPasswordExpiresSoon: true }, 0)?.warn, true);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 14 }, 0)?.warn, true);
    assert.equal(
      passwordExpiryOf({ token: 't', passwordExpiresInDays: 0 }, 0),
      undefined,
      '0 days without a notice: no expiry set',
    );
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 0, notifyPasswordExpiresSoon: false }, 0), undefined);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 0, notifyPasswordExpiresSoon: true }, 0)?.warn, true);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 3 }, 1000)?.expiresAt, 1000 + 3 * DAY);
    assert.equal(describeExpiry({ daysLeft: 1, expiresAt: 0, warn: true }, 'ana'), 'the password of user "ana" expires in 1 day');
    assert.equal(describeExpiry({ daysLeft: 0, expiresAt: 0, warn: true }, 'ana'), 'the password of user "ana" expires today');
    assert.equal(describeExpiry({ daysLeft: -2, expiresAt: 0, warn: true }, 'ana'), 'the password of user "ana" has expired');
  });

  it('property: over any sequence of logins, warnings are at least a day apart and one is given each day a warning is due', function () {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 6 * 60 * 60 * 1000 }), { minLength: 1, maxLength: 200 }), (gaps) => {
        let now = 0;
        let last: number | undefined;
        const warned: number[] = [];
        const expiry = passwordExpiryOf({ token: 't', passwordExpiresInDays: 5 }, 0);
        for (const gap of gaps) {
          now += gap;
          if (warnNow(expiry, last, now)) {
            last = now;
            warned.push(now);
          }
        }
        assert.equal(warned[0], gaps[0], 'the first login warns');
        for (let i = 1; i < warned.length; i++) assert.ok(warned[i] - warned[i - 1] >= WARN_EVERY_MS);
        // no gap of more than a day (plus the largest login gap) without a warning
        for (let i = 1; i < warned.length; i++) assert.ok(warned[i] - warned[i - 1] < WARN_EVERY_MS + 6 * 60 * 60 * 1000);
      }),
    );
  });
});

describe('password expiry warnings passed on by the nodes', function () {
  afterEach(() => resetHomes()); // what a restart of Node-RED does

  const warning = (daysLeft: number): PasswordWarning => ({
    daysLeft,
    expiresAt: 0,
    warn: true,
    user: 'admin',
    text: describeExpiry({ daysLeft, expiresAt: 0, warn: true }, 'admin'),
  });
  /** a client as a deploy makes it: a new one at every redeploy, its session warning at its first login */
  const client = (baseUrl: string) => Object.assign(new EventEmitter(), { baseUrl });

  it('once a day per server and listener, however often the flows are redeployed', function () {
    let now = 1_700_000_000_000;
    const got: string[] = [];
    for (let deploy = 0; deploy < 5; deploy++) {
      const c = client('http://LAB-1.example/');
      const off = onPasswordWarning(
        c,
        (w) => got.push(`server ${w.daysLeft}`),
        'server',
        () => now,
      );
      const offPoll = onPasswordWarning(
        c,
        (w) => got.push(`poll ${w.daysLeft}`),
        'poll p1',
        () => now,
      );
      c.emit('password-warning', warning(3)); // the new session's first login
      off();
      offPoll();
      now += 60 * 60 * 1000;
    }
    assert.deepEqual(got, ['server 3', 'poll 3'], 'one warning per listener in the first day');
    now += WARN_EVERY_MS;
    const c = client('http://lab-1.example');
    onPasswordWarning(
      c,
      (w) => got.push(`server ${w.daysLeft}`),
      'server',
      () => now,
    );
    c.emit('password-warning', warning(2));
    assert.deepEqual(got, ['server 3', 'poll 3', 'server 2'], 'a day later, again');
    const other = client('http://lab-2.example');
    onPasswordWarning(
      other,
      (w) => got.push(`lab-2 ${w.daysLeft}`),
      'server',
      () => now,
    );
    other.emit('password-warning', warning(2));
    assert.equal(got.at(-1), 'lab-2 2', 'another server warns on its own');
    resetHomes(); // a restart of Node-RED: the first login warns again
    const restarted = client('http://lab-1.example');
    onPasswordWarning(
      restarted,
      (w) => got.push(`restarted ${w.daysLeft}`),
      'server',
      () => now,
    );
    restarted.emit('password-warning', warning(2));
    assert.equal(got.at(-1), 'restarted 2');
  });
});
