import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError, SessionState } from '../../src/client';
import {
  connectionChange,
  ConnectionView,
  newReachability,
  Observation,
  observe,
  Reachability,
  Reported,
  viewOf,
} from '../../src/nodes/shared/connection-state';
import { ServerConnection } from '../../src/nodes/shared/server-connection';

const unreachable = (kind: 'network' | 'timeout' | 'http' = 'network'): LhError =>
  new LhError(`no answer (${kind})`, { kind, operation: 'poll', statusCode: kind === 'http' ? 503 : undefined });

/** A request outcome; `failed` picks one of the ways a request goes unanswered. */
type Step = { kind: 'answered'; status: number } | { kind: 'failed'; how: 'network' | 'timeout' | 'http' };

const steps = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('answered' as const), status: fc.constantFrom(200, 204, 400, 401, 404, 409, 423) }),
    fc.record({
      kind: fc.constant('failed' as const),
      how: fc.constantFrom('network' as const, 'timeout' as const, 'http' as const),
    }),
  ),
  { maxLength: 40 },
);
const thresholds = fc.integer({ min: 1, max: 6 });

/** One request after another (each sent once the previous outcome was known), on interface A. */
function sequential(list: Step[]): Observation[] {
  return list.map((step, i) => ({
    kind: 'request',
    api: 'A',
    sent: i + 1,
    latest: i + 1,
    error:
      step.kind === 'answered'
        ? step.status >= 300
          ? new LhError('refused', { kind: 'http', operation: 'x', statusCode: step.status })
          : undefined
        : unreachable(step.how),
  }));
}

function fold(observations: Observation[], state: Reachability = newReachability()): Reachability[] {
  const out: Reachability[] = [];
  for (const o of observations) out.push((state = observe(state, o)));
  return out;
}

/** The trailing run of failures after step i, by counting (the model the state must agree with). */
function trailingFailures(list: Step[], i: number): number {
  let n = 0;
  for (let j = i; j >= 0 && list[j].kind === 'failed'; j--) n++;
  return n;
}

describe('connection state (one per lh-server)', function () {
  it('is offline exactly when the last `offlineAfter` requests in a row went unanswered', function () {
    fc.assert(
      fc.property(steps, thresholds, (list, offlineAfter) => {
        const states = fold(sequential(list));
        states.forEach((state, i) => {
          const view = viewOf(state, ['A'], offlineAfter);
          const offline = trailingFailures(list, i) >= offlineAfter;
          assert.equal(view.state === 'offline', offline, `step ${i}: ${view.state}`);
          if (!offline) assert.equal(view.state, 'online');
        });
      }),
    );
  });

  it('one answer (any HTTP status below 500) makes it online again, with the failures of the streak it ended', function () {
    fc.assert(
      fc.property(steps, thresholds, fc.constantFrom(200, 401, 404), (list, offlineAfter, status) => {
        const before = fold(sequential(list)).at(-1) ?? newReachability();
        const failures = list.length > 0 ? trailingFailures(list, list.length - 1) : 0;
        const after = observe(before, {
          kind: 'request',
          api: 'A',
          sent: list.length + 1,
          latest: list.length + 1,
          ...(status === 200 ? {} : { error: new LhError('x', { kind: 'http', operation: 'x', statusCode: status }) }),
        });
        const view = viewOf(after, ['A'], offlineAfter);
        assert.equal(view.state, 'online');
        assert.equal(view.state === 'online' && view.failures, 0);
        if (failures > 0) assert.equal(view.state === 'online' && view.streak, failures);
      }),
    );
  });

  it('a refused login never shows as offline, whatever fails after it, until a login is allowed again', function () {
    const refusals: SessionState[] = ['login-failed', 'password-expired', 'locked'];
    fc.assert(
      fc.property(steps, steps, thresholds, fc.constantFrom(...refusals), (first, then, offlineAfter, refusal) => {
        const error = new LhError('login as "admin" was rejected (401)', {
          kind: 'auth',
          operation: 'authenticate',
          statusCode: 401,
        });
        let state = fold(sequential(first)).at(-1) ?? newReachability();
        state = observe(state, { kind: 'session', state: refusal, error });
        const offset = first.length;
        for (const o of sequential(then)) {
          if (o.kind !== 'request') continue;
          state = observe(state, { ...o, sent: o.sent + offset, latest: o.latest + offset });
          const view = viewOf(state, ['A', 'B'], offlineAfter);
          assert.equal(view.state, 'refused');
          assert.equal(view.state === 'refused' && view.error, error);
        }
        const allowed = observe(state, { kind: 'session', state: 'idle' });
        assert.notEqual(viewOf(allowed, ['A'], offlineAfter).state, 'refused');
      }),
    );
  });

  it('reports each transition once: offline, then online, alternating, as often as the model crosses the threshold', function () {
    fc.assert(
      fc.property(steps, thresholds, (list, offlineAfter) => {
        let reported: Reported = 'unknown';
        const changes: string[] = [];
        for (const state of fold(sequential(list))) {
          const next = connectionChange(reported, viewOf(state, ['A'], offlineAfter));
          reported = next.reported;
          if (next.change) changes.push(next.change.state);
        }
        // the model: offline each time the failures in a row reach the threshold; online at the next answer
        const expected: string[] = [];
        let offline = false;
        list.forEach((_, i) => {
          if (!offline && trailingFailures(list, i) >= offlineAfter) {
            offline = true;
            expected.push('offline');
          } else if (offline && list[i].kind === 'answered') {
            offline = false;
            expected.push('online');
          }
        });
        assert.deepEqual(changes, expected);
      }),
    );
  });

  it('requests under way together count as one failure: the sources of one poll, or two nodes polling at once', function () {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }),
        thresholds,
        (rounds, offlineAfter) => {
          // each round: `n` requests sent together, all unanswered (their outcomes known after all were sent)
          let state = newReachability();
          let sent = 0;
          for (const n of rounds) {
            const first = sent + 1;
            sent += n;
            for (let k = 0; k < n; k++)
              state = observe(state, { kind: 'request', api: 'A', sent: first + k, latest: sent, error: unreachable() });
          }
          const view = viewOf(state, ['A'], offlineAfter);
          const failures = view.state === 'offline' || view.state === 'online' ? view.failures : -1;
          assert.equal(failures, rounds.length);
        },
      ),
    );
  });

  it('keeps the interfaces apart: B unanswered makes a view of A and B offline, not a view of A alone', function () {
    let state = newReachability();
    state = observe(state, { kind: 'request', api: 'A', sent: 1, latest: 1 });
    for (let i = 2; i <= 4; i++)
      state = observe(state, { kind: 'request', api: 'B', sent: i, latest: i, error: unreachable('timeout') });
    const both = viewOf(state, ['A', 'B'], 3);
    assert.equal(both.state, 'offline');
    assert.deepEqual(both.state === 'offline' && both.interfaces, ['B']);
    assert.equal(viewOf(state, ['A'], 3).state, 'online');
  });

  it('an untrusted certificate is unusable, not offline; a socket that opens is an answer, one that closes is not a failure', function () {
    let state = newReachability();
    const tls = new LhError('TLS', { kind: 'tls', operation: 'x' });
    state = observe(state, { kind: 'request', api: 'B', sent: 1, latest: 1, error: tls });
    assert.deepEqual(viewOf(state, ['B'], 1), { state: 'refused', error: tls });
    assert.equal(viewOf(state, ['A'], 1).state, 'unknown');
    state = observe(state, { kind: 'socket', state: 'disconnected' });
    assert.equal(viewOf(state, ['A'], 1).state, 'unknown');
    state = observe(state, { kind: 'socket', state: 'connected' });
    assert.equal(viewOf(state, ['A'], 1).state, 'online');
  });
});

describe('server connection (what the lh-server publishes)', function () {
  const fail = (c: ServerConnection, sent: number): void =>
    c.observe({ kind: 'request', api: 'A', sent, latest: sent, error: unreachable() });

  it('tells every subscriber each change of its view once, and nothing after it unsubscribed', function () {
    const c = new ServerConnection();
    const seen: Record<string, ConnectionView['state'][]> = { a: [], b: [] };
    const offA = c.subscribe({ apis: ['A'], offlineAfter: 2, onChange: (v) => seen.a.push(v.state) });
    c.subscribe({ apis: ['A'], offlineAfter: 2, onChange: (v) => seen.b.push(v.state) });
    c.observe({ kind: 'request', api: 'A', sent: 1, latest: 1 });
    fail(c, 2);
    fail(c, 3);
    fail(c, 4); // still offline: the failure count changes, the two views change with it
    offA();
    c.observe({ kind: 'request', api: 'A', sent: 5, latest: 5 });
    assert.deepEqual(seen.a, ['online', 'online', 'offline', 'offline']);
    assert.deepEqual(seen.b, ['online', 'online', 'offline', 'offline', 'online']);
    assert.equal(c.subscriberCount, 1);
  });

  it('applies the smallest threshold of its subscribers, the default 3 without one', function () {
    const c = new ServerConnection();
    assert.equal(c.offlineAfter, 3);
    const off5 = c.subscribe({ apis: ['A'], offlineAfter: 5, onChange: () => undefined });
    const off2 = c.subscribe({ apis: ['A'], offlineAfter: 2, onChange: () => undefined });
    c.subscribe({ apis: ['A'], onChange: () => undefined });
    assert.equal(c.offlineAfter, 2);
    off2();
    assert.equal(c.offlineAfter, 5);
    off5();
    assert.equal(c.offlineAfter, 3);
  });

  it('close() drops every subscriber', function () {
    const c = new ServerConnection();
    const views: string[] = [];
    c.subscribe({ apis: ['A'], onChange: (v) => views.push(v.state) });
    c.close();
    fail(c, 1);
    assert.equal(c.subscriberCount, 0);
    assert.deepEqual(views, []);
  });
});

describe('connection state: what the review found (issue 22.3)', function () {
  /** The msgs (offline/online) a watcher sends for a run of sequential outcomes, by the model: its own threshold. */
  function modelMsgs(list: Step[], offlineAfter: number): string[] {
    const out: string[] = [];
    let offline = false;
    list.forEach((step, i) => {
      if (!offline && trailingFailures(list, i) >= offlineAfter) {
        offline = true;
        out.push(`offline ${offlineAfter}`);
      } else if (offline && step.kind === 'answered') {
        offline = false;
        out.push('online');
      }
    });
    return out;
  }

  it("each watcher's msgs follow its own offlineAfter, whatever the others configured; the status goes offline at the smallest", function () {
    fc.assert(
      fc.property(steps, fc.array(thresholds, { minLength: 1, maxLength: 4 }), (list, own) => {
        const c = new ServerConnection();
        const sent = own.map(() => [] as string[]);
        const shown = own.map(() => [] as string[]);
        const reported: Reported[] = own.map(() => 'unknown');
        own.forEach((offlineAfter, k) =>
          c.subscribe({
            apis: ['A'],
            offlineAfter,
            onChange: (view, mine) => {
              shown[k].push(view.state);
              const next = connectionChange(reported[k], mine);
              reported[k] = next.reported;
              if (next.change) sent[k].push(next.change.state === 'offline' ? `offline ${next.change.failedPolls}` : 'online');
            },
          }),
        );
        const smallest = Math.min(...own);
        sequential(list).forEach((o, i) => {
          c.observe(o);
          assert.equal(c.view(['A']).state === 'offline', trailingFailures(list, i) >= smallest, `status at step ${i}`);
        });
        own.forEach((offlineAfter, k) =>
          assert.deepEqual(sent[k], modelMsgs(list, offlineAfter), `watcher ${k} (offline after ${offlineAfter})`),
        );
      }),
    );
  });

  it('a request that fails after another one of its interface was answered while it was under way counts no failure', function () {
    fc.assert(
      fc.property(
        steps,
        fc.array(fc.constantFrom(200, 204, 404, 409), { minLength: 1, maxLength: 5 }),
        thresholds,
        (before, answers, offlineAfter) => {
          // a slow request (seq n+1) is sent; the instrument answers the polls sent after it; then the slow one times out
          let state = fold(sequential(before)).at(-1) ?? newReachability();
          const slow = before.length + 1;
          let seq = slow;
          for (const status of answers) {
            seq++;
            const error =
              status >= 300 ? new LhError('refused', { kind: 'http', operation: 'x', statusCode: status }) : undefined;
            state = observe(state, { kind: 'request', api: 'A', sent: seq, latest: seq, error });
          }
          const after = observe(state, { kind: 'request', api: 'A', sent: slow, latest: seq, error: unreachable('timeout') });
          assert.deepEqual(viewOf(after, ['A'], offlineAfter), viewOf(state, ['A'], offlineAfter));
          // an answer on B says nothing of A: the slow A request still counts then
          const onB = observe(fold(sequential(before)).at(-1) ?? newReachability(), {
            kind: 'request',
            api: 'B',
            sent: slow + 1,
            latest: slow + 1,
          });
          const failed = observe(onB, { kind: 'request', api: 'A', sent: slow, latest: slow + 1, error: unreachable('timeout') });
          const view = viewOf(failed, ['A'], offlineAfter);
          assert.equal(
            view.state === 'offline' || view.state === 'online' ? view.failures : -1,
            trailingFailures([...before, { kind: 'failed', how: 'timeout' }], before.length),
          );
        },
      ),
    );
  });

  it('a subscriber that throws: the others are told all the same, the observation goes through, the server hears why', function () {
    const warned: unknown[] = [];
    const c = new ServerConnection((err) => warned.push(err));
    const seen: string[] = [];
    c.subscribe({
      apis: ['A'],
      onChange: () => {
        throw new Error('a broken node');
      },
    });
    c.subscribe({ apis: ['A'], onChange: (v) => seen.push(v.state) });
    assert.doesNotThrow(() => c.observe({ kind: 'session', state: 'login-failed' }));
    assert.deepEqual(seen, ['refused']);
    assert.equal(warned.length, 1);
    assert.match(String(warned[0]), /a broken node/);
  });

  it('a refused login leaves B alone when B has its own instrument token: its failures count, its view is not "refused"', function () {
    fc.assert(
      fc.property(steps, thresholds, (list, offlineAfter) => {
        const onB = sequential(list).map((o) => ({ ...o, api: 'B' as const }));
        const refusal: Observation = {
          kind: 'session',
          state: 'login-failed',
          error: new LhError('rejected', { kind: 'auth', operation: 'authenticate', statusCode: 401 }),
        };
        const refused = fold([refusal, ...onB], newReachability(['A'])).at(-1) ?? newReachability();
        const plain = fold(onB, newReachability(['A'])).at(-1) ?? newReachability();
        assert.deepEqual(viewOf(refused, ['B'], offlineAfter), viewOf(plain, ['B'], offlineAfter));
        assert.equal(viewOf(refused, ['A'], offlineAfter).state, 'refused');
        assert.equal(viewOf(refused, ['A', 'B'], offlineAfter).state, 'refused');
        // without a token B goes through the session: refused too
        assert.equal(viewOf(fold([refusal, ...onB]).at(-1) ?? newReachability(), ['B'], offlineAfter).state, 'refused');
      }),
    );
  });

  it('nothing heard of A (answers, failures, sockets opening) ever changes the view of B, nor the other way round', function () {
    const event = fc.oneof(
      fc.record({
        api: fc.constantFrom('A' as const, 'B' as const),
        step: fc.constantFrom<Step>(
          { kind: 'answered', status: 200 },
          { kind: 'answered', status: 404 },
          { kind: 'failed', how: 'network' },
          { kind: 'failed', how: 'timeout' },
        ),
      }),
      fc.constant({ api: 'socket' as const }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), thresholds, (events, offlineAfter) => {
        let both = newReachability();
        const only: Record<'A' | 'B', Reachability> = { A: newReachability(), B: newReachability() };
        events.forEach((e, i) => {
          const o: Observation =
            e.api === 'socket'
              ? { kind: 'socket', state: 'connected' }
              : ({ ...sequential([e.step])[0], api: e.api, sent: i + 1, latest: i + 1 } as Observation);
          both = observe(both, o);
          const api = e.api === 'socket' ? 'A' : e.api;
          only[api] = observe(only[api], o);
          for (const side of ['A', 'B'] as const)
            assert.deepEqual(viewOf(both, [side], offlineAfter), viewOf(only[side], [side], offlineAfter));
        });
      }),
    );
  });
});
