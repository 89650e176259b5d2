import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeExpiry, passwordExpiryOf, warnNow, WARN_EVERY_MS } from '../../src/client/password-expiry';

const DAY = 24 * 60 * 60 * 1000;

describe('password expiry (from the login result)', function () {
  it('warns when the instrument says so, or from 14 days before expiry, and never without a day count', function () {
    assert.equal(passwordExpiryOf({ token: 't' }, 0), undefined);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 90 }, 0)?.warn, false);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 90, notifyPasswordExpiresSoon: true }, 0)?.warn, true);
    assert.equal(passwordExpiryOf({ token: 't', passwordExpiresInDays: 14 }, 0)?.warn, true);
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
