/**
 * The login gate of an instrument (src/client/login-gate.ts): one password in flight per user, a rejection holding
 * every session back; bounded, and a login in flight never forgotten for the bound (a second would go out beside it).
 */
import assert from 'node:assert/strict';

import { LhError, LoginGate } from '../../src/client';
import { spacedOutMs } from '../../src/client/login-gate';

describe('login gate', function () {
  it('past 1,000 rejected credentials the oldest rejections are forgotten, never a login in flight', function () {
    const gate = new LoginGate();
    const key = LoginGate.keyOf('admin', 'labwire');
    const first = gate.turn(key);
    assert.equal(first.go, true);
    for (let i = 0; i < 1500; i++) {
      const other = LoginGate.keyOf(`user${i}`, 'wrong');
      const turn = gate.turn(other);
      assert.equal(turn.go, true);
      if (turn.go) turn.done(new LhError('rejected', { kind: 'auth', operation: 'authenticate', statusCode: 401 }));
    }
    // the login in flight is still the one: a session with the same credentials waits for it, sends nothing
    const second = gate.turn(key);
    assert.equal(second.go, false);
    assert.ok(!second.go && 'wait' in second, 'waits for the login in flight');
    // the oldest rejections were forgotten (bounded), the newest is held
    const oldest = gate.turn(LoginGate.keyOf('user0', 'wrong'));
    assert.equal(oldest.go, true, 'forgotten: may be tried again');
    const newest = gate.turn(LoginGate.keyOf('user1499', 'wrong'));
    assert.ok(!newest.go && 'held' in newest, 'the newest rejection still holds');
  });

  it('logins failing without a verdict are spaced out 1 s, 2 s, 4 s, … 60 s; a success or a user action ends it', function () {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 50].map(spacedOutMs), [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    const gate = new LoginGate();
    const key = LoginGate.keyOf('admin', 'labwire');
    const failure = new LhError('login failed: 503', { kind: 'auth', operation: 'authenticate', statusCode: 503 });
    let now = 0;
    for (const wait of [1000, 2000, 4000]) {
      const turn = gate.turn(key, now);
      assert.ok(turn.go);
      if (turn.go) turn.failed(failure, now);
      const early = gate.turn(key, now + wait - 1);
      assert.ok(!early.go && 'spaced' in early && early.spaced.failure === failure, `held for ${wait} ms`);
      now += wait;
    }
    gate.release(key); // a deploy or Test connection: the next goes at once
    const afterRelease = gate.turn(key, now);
    assert.ok(afterRelease.go);
    if (afterRelease.go) afterRelease.failed(failure, now);
    assert.equal(gate.nextAt(key), now + 1000, 'counted afresh after the user acted');
    const later = gate.turn(key, now + 1000);
    assert.ok(later.go);
    if (later.go) later.done(); // answered: no spacing left
    assert.equal(gate.nextAt(key), undefined);
    assert.ok(gate.turn(key, now + 1000).go);
  });

  it('a user name in another letter case is the same user; another password is another attempt', function () {
    assert.equal(LoginGate.keyOf('Admin', 'pw'), LoginGate.keyOf('admin', 'pw'));
    assert.notEqual(LoginGate.keyOf('admin', 'pw'), LoginGate.keyOf('admin', 'Pw'));
    assert.ok(!LoginGate.keyOf('admin', 'labwire').includes('labwire'), 'a digest, not the password');
  });
});
