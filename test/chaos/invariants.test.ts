/** The chaos invariants (pure): each one fails on the observation that breaks it and holds on its near miss. */
import assert from 'assert';

import fc from 'fast-check';

import { check, Invariant, longestCovered, Observation, union } from './invariants';

const LEASE = 3000;
const T = 1_000_000; // an epoch ms far from 0

function observation(part: Partial<Observation>): Observation {
  return {
    leaseMs: LEASE,
    pollMs: 1000,
    graceMs: 2000,
    end: T + 60_000,
    spans: [{ replica: 'r1', pid: 11, instruments: [0], from: T, to: T + 60_000 }],
    injected: [],
    emitted: [],
    writes: [],
    bOutcomes: [],
    intents: [],
    leases: [],
    losses: [],
    chains: [],
    ...part,
  };
}

const broken = (o: Observation): Invariant[] => [...new Set(check(o).violations.map((v) => v.invariant))];

describe('chaos invariants', function () {
  const error = { n: 1, instrument: 0, source: 'A' as const, id: 'x1', at: T + 1000, resolvedAt: T + 20_000 };
  const raised = (at: number, redelivered = false, lost = false) => ({
    kind: 'raised',
    n: 1,
    redelivered,
    lost,
    replica: 'r1',
    at,
  });

  it('(a) an error pending 19 s while r1 knew its instrument, never raised: broken; raised once: held', function () {
    assert.deepStrictEqual(broken(observation({ injected: [error] })), ['a']);
    assert.deepStrictEqual(broken(observation({ injected: [error], emitted: [raised(T + 2000)] })), []);
  });

  it('(a) not checked when no live replica knew the instrument long enough (killed, or listing another one)', function () {
    const short = [{ replica: 'r1', pid: 11, instruments: [0], from: T, to: T + 5000 }];
    assert.deepStrictEqual(broken(observation({ injected: [error], spans: short })), []);
    const other = [{ replica: 'r1', pid: 11, instruments: [1], from: T, to: T + 60_000 }];
    assert.deepStrictEqual(broken(observation({ injected: [error], spans: other })), []);
    const quick = { ...error, resolvedAt: T + 4000 };
    assert.deepStrictEqual(broken(observation({ injected: [quick] })), [], 'gone before two leases');
  });

  it("(b) raised twice by replicas that could reach Redis: broken; one of them marked coordination 'lost': held", function () {
    assert.deepStrictEqual(
      broken(observation({ injected: [error], emitted: [raised(T + 2000, false, true), raised(T + 9000)] })),
      [],
    );
    assert.deepStrictEqual(
      broken(observation({ injected: [error], emitted: [raised(T + 2000), raised(T + 5000, false, true), raised(T + 9000)] })),
      ['b'],
    );
  });

  it('(b) raised twice: broken unless the second is marked redelivered', function () {
    assert.deepStrictEqual(broken(observation({ injected: [error], emitted: [raised(T + 2000), raised(T + 9000)] })), ['b']);
    assert.deepStrictEqual(broken(observation({ injected: [error], emitted: [raised(T + 2000), raised(T + 9000, true)] })), []);
  });

  const answer = (time: number, status: number, target = 'x1') => ({
    instrument: 0,
    api: 'A' as const,
    method: 'PUT',
    path: '/api/v1/errors/runtime',
    target,
    status,
    time,
  });
  const intent = (at: number, target = 'x1') => ({ instrument: 0, api: 'A', method: 'PUT', path: '/errors/runtime', target, at });

  it('(c) an answer sent after the instrument accepted one: broken; refused, then accepted: held', function () {
    const base = { injected: [error], emitted: [raised(T + 2000)], intents: [intent(T + 2500)] };
    assert.deepStrictEqual(broken(observation({ ...base, writes: [answer(T + 3000, 204), answer(T + 4000, 409)] })), ['c']);
    assert.deepStrictEqual(broken(observation({ ...base, writes: [answer(T + 3000, 400), answer(T + 4000, 204)] })), []);
  });

  it('(c) two errors listed under one id: one accepted answer each is held, a third answer is broken', function () {
    const twin = { n: 2, instrument: 0, source: 'A' as const, id: 'x1', at: T + 1500, resolvedAt: T + 20_000 };
    const base = {
      injected: [error, twin],
      emitted: [raised(T + 2000), { ...raised(T + 2000), n: 2 }],
      intents: [intent(T + 2500), intent(T + 3500)],
    };
    const once = [answer(T + 3000, 204), answer(T + 4000, 204)];
    assert.deepStrictEqual(broken(observation({ ...base, writes: once })), []);
    assert.deepStrictEqual(broken(observation({ ...base, writes: [...once, answer(T + 5000, 409)] })), ['c']);
  });

  it('(c) a reused id: the answer belongs to the error injected last before it', function () {
    const again = { n: 2, instrument: 0, source: 'A' as const, id: 'x1', at: T + 30_000, resolvedAt: T + 31_000 };
    const o = observation({
      injected: [{ ...error, resolvedAt: T + 10_000 }, again],
      emitted: [raised(T + 2000), { ...raised(T + 30_500), n: 2 }],
      intents: [intent(T + 2500)],
      writes: [answer(T + 3000, 204), answer(T + 30_600, 204)],
    });
    assert.deepStrictEqual(broken(o), []);
  });

  it('(d) the instrument held by no live replica for more than two leases: broken; taken over in time: held', function () {
    const samples = (holder: (at: number) => number | undefined) =>
      Array.from({ length: 60 }, (_, k) => ({ instrument: 0, at: T + k * 500, read: true, holderPid: holder(T + k * 500) }));
    const spans = [
      { replica: 'r1', pid: 11, instruments: [0], from: T, to: T + 5000 },
      { replica: 'r2', pid: 22, instruments: [0], from: T, to: T + 60_000 },
    ];
    // r1 stopped at +5 s, its lease stays until +8 s, r2 takes it at +9 s: held
    assert.deepStrictEqual(broken(observation({ spans, leases: samples((at) => (at < T + 9000 ? 11 : 22)) })), []);
    // r2 never takes it
    assert.deepStrictEqual(broken(observation({ spans, leases: samples(() => 11) })), ['d']);
    // Redis unreadable meanwhile: nothing to say
    const unread = samples(() => 11).map((s) => ({ ...s, read: s.at < T + 5000 }));
    assert.deepStrictEqual(broken(observation({ spans, leases: unread })), []);
  });

  it('(e) a write without an intent: broken, unless made between the last read of a chain and its loss', function () {
    const write = answer(T + 3000, 204);
    assert.deepStrictEqual(broken(observation({ writes: [write] })), ['e']);
    assert.deepStrictEqual(broken(observation({ writes: [write], intents: [intent(T + 2900)] })), []);
    assert.deepStrictEqual(
      broken(observation({ writes: [write], intents: [intent(T + 3100)] })),
      ['e'],
      'intent after the write',
    );
    assert.deepStrictEqual(broken(observation({ writes: [write], losses: [{ readAt: T + 2000, lostAt: T + 3500 }] })), []);
    const login = { ...write, method: 'POST', path: '/api/v1/authenticate', target: undefined };
    assert.deepStrictEqual(broken(observation({ writes: [login] })), [], 'logins are not audited');
    assert.deepStrictEqual(
      broken(observation({ chains: [{ instrument: 0, at: T, ok: false, reason: 'hash' }] })),
      ['e'],
      'a chain that does not verify',
    );
    const gapped = { instrument: 0, at: T + 4000, ok: true, gaps: 1 };
    assert.deepStrictEqual(broken(observation({ chains: [gapped] })), ['e'], 'records declared missing with no loss');
    assert.deepStrictEqual(
      broken(observation({ chains: [gapped], losses: [{ readAt: T + 2000, lostAt: T + 3500 }] })),
      [],
      'records declared missing after Redis lost its data',
    );
  });

  it('union and longestCovered agree with a millisecond-by-millisecond count', function () {
    const interval = fc
      .tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 60 }))
      .map(([from, len]) => ({ from, to: from + len }));
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 8 }), interval, (covered, probe) => {
        const merged = union(covered);
        const inside = (t: number): boolean => covered.some((c) => c.from <= t && t < c.to);
        for (let t = 0; t < 270; t++)
          assert.strictEqual(
            merged.some((c) => c.from <= t && t < c.to),
            inside(t),
          );
        let best = 0;
        let run = 0;
        for (let t = probe.from; t < probe.to; t++) {
          run = inside(t) ? run + 1 : 0;
          best = Math.max(best, run);
        }
        assert.strictEqual(Math.max(0, longestCovered(probe.from, probe.to, merged)), best);
      }),
    );
  });
});
