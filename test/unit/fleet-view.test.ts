import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import fc from 'fast-check';

import { FleetRow, foldFleet, MAX_FLEET, STALE_MS } from '../../src/observe/fleet-view';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples-extra', '07 Operator dashboard (needs Dashboard 2.0).json');

/** Example 07's function node "fleet (server side)" as a function of (rows in flow context, msg, now). */
function exampleFold(): (rows: readonly FleetRow[], msg: unknown, now: number) => { rows: readonly FleetRow[]; out: unknown } {
  const nodes = JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as { id: string; func?: string }[];
  const func = nodes.find((n) => n.id === 'lh-ex07-fleet')?.func;
  assert.ok(func, 'example 07 has its fleet node');
  const body = new Function('msg', 'flow', 'Date', func) as (msg: unknown, flow: unknown, date: unknown) => unknown;
  return (rows, msg, now) => {
    let stored: unknown = rows.length === 0 ? undefined : rows;
    const flow = { get: () => stored, set: (_k: string, v: unknown) => (stored = v) };
    const out = body(msg, flow, { now: () => now, parse: Date.parse });
    return { rows: (stored ?? []) as readonly FleetRow[], out };
  };
}

const doc = (instrument: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  instrument,
  connection: { state: 'online', reason: null },
  run: { state: 'Running', protocol: 'Demo protocol', step: 'Aspirate', progress: 0.25, eta: null },
  errors: {
    pending: 1,
    mostSevere: null,
    list: [{ source: 'A', id: '7', title: 'Clot detected', severity: 'Error', answerUrl: 'http://h/lh-answer?t=x' }],
  },
  door: 'closed',
  systemReady: true,
  passwordExpiresInDays: null,
  updatedAt: '2026-11-28T04:00:00.000Z',
  ...extra,
});

describe('the fleet view folded from state documents (fleet-view.ts, example 07)', function () {
  it('one row per instrument by name, sorted; the newest document replaces the row; event msgs change nothing', function () {
    let rows: readonly FleetRow[] = [];
    rows = foldFleet(rows, { topic: 'lab/b/state', payload: doc('bench 2') }, 1);
    rows = foldFleet(rows, { topic: 'lab/a/state', payload: doc('bench 1') }, 2);
    rows = foldFleet(
      rows,
      { topic: 'lab/b/state', payload: doc('bench 2', { connection: { state: 'offline', reason: 'ECONNREFUSED' } }) },
      3,
    );
    assert.deepEqual(
      rows.map((r) => [r.instrument, r.connection, r.reason]),
      [
        ['bench 1', 'online', ''],
        ['bench 2', 'offline', 'ECONNREFUSED'],
      ],
    );
    assert.deepEqual(rows[0].run, { state: 'Running', protocol: 'Demo protocol', step: 'Aspirate', progress: 0.25 });
    assert.deepEqual(rows[0].errors, [
      {
        source: 'A',
        id: '7',
        title: 'Clot detected',
        severity: 'Error',
        answerUrl: 'http://h/lh-answer?t=x',
        answerExpires: null,
      },
    ]);
    const event = { topic: 'lab/a/errors/A-7', payload: { event: 'raised', source: 'A', id: '7' } };
    assert.equal(foldFleet(rows, event, 4), rows);
    assert.equal(foldFleet(rows, { payload: 'junk' }, 4), rows);
  });

  it('keeps no link that is not http(s), and names with HTML as plain text (the page escapes them)', function () {
    const name = '<img src=x onerror="alert(1)">';
    const list = [
      { source: 'A', id: '1', title: '<b>t</b>', severity: 'Error', answerUrl: 'javascript:alert(1)' },
      {
        source: 'A',
        id: '2',
        title: 't',
        severity: 'Error',
        answerUrl: 'https://h/p?t=1',
        answerExpires: '2020-01-01T00:00:00.000Z',
      },
    ];
    const rows = foldFleet([], { payload: doc(name, { errors: { pending: 2, list } }) }, 1);
    assert.equal(rows[0].instrument, name);
    assert.equal(rows[0].errors[0].answerUrl, null);
    assert.equal(rows[0].errors[0].title, '<b>t</b>');
    assert.equal(rows[0].errors[1].answerExpires, '2020-01-01T00:00:00.000Z');
  });

  it('drops instruments not heard of for 5 minutes at a prune tick (one removed from the flows), keeps the others', function () {
    let rows: readonly FleetRow[] = [];
    rows = foldFleet(rows, { payload: doc('gone') }, 0);
    rows = foldFleet(rows, { payload: doc('here') }, 0);
    rows = foldFleet(rows, { payload: doc('here') }, STALE_MS); // lh-state repeats its document
    assert.equal(foldFleet(rows, { topic: 'prune' }, STALE_MS), rows, 'nothing stale yet: the same rows');
    rows = foldFleet(rows, { topic: 'prune' }, STALE_MS + 1);
    assert.deepEqual(
      rows.map((r) => r.instrument),
      ['here'],
    );
  });

  it('model: any sequence of documents, prunes and junk gives the latest row of each instrument heard of lately, bounded', function () {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('doc' as const),
        name: fc.constantFrom(...names),
        pending: fc.nat(5),
        wait: fc.nat(200_000),
      }),
      fc.record({ kind: fc.constant('prune' as const), wait: fc.nat(400_000) }),
      fc.record({ kind: fc.constant('junk' as const), wait: fc.nat(10) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        let rows: readonly FleetRow[] = [];
        const model = new Map<string, { pending: number; at: number }>();
        let now = 0;
        for (const s of steps) {
          now += s.wait;
          if (s.kind === 'doc') {
            rows = foldFleet(rows, { payload: doc(s.name, { errors: { pending: s.pending, list: [] } }) }, now);
            model.set(s.name, { pending: s.pending, at: now });
          } else if (s.kind === 'prune') {
            rows = foldFleet(rows, { topic: 'prune' }, now);
            for (const [k, v] of [...model]) if (now - v.at > STALE_MS) model.delete(k);
          } else rows = foldFleet(rows, { topic: 'x', payload: { instrument: 'junk' } }, now);
        }
        assert.deepEqual(
          rows.map((r) => [r.instrument, r.pending]),
          [...model.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, v.pending]),
        );
      }),
    );
  });

  it(`holds at most ${MAX_FLEET} instruments, dropping the one heard of longest ago`, function () {
    let rows: readonly FleetRow[] = [];
    for (let i = 0; i <= MAX_FLEET; i++) rows = foldFleet(rows, { payload: doc(`i${String(i).padStart(3, '0')}`) }, i);
    assert.equal(rows.length, MAX_FLEET);
    assert.ok(!rows.some((r) => r.instrument === 'i000'));
    assert.ok(rows.some((r) => r.instrument === `i${MAX_FLEET}`));
  });

  it("example 07's function node folds exactly as this module does (any documents, prunes, junk, bounds)", function () {
    const run = exampleFold();
    const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constant('x'.repeat(250)), fc.constant('<script>alert(1)</script>'));
    const anyDoc = fc.record({
      instrument: fc.oneof(fc.constantFrom('a', 'b', 'c', ''), text, fc.integer()),
      connection: fc.oneof(
        fc.record({ state: fc.constantFrom('online', 'offline', 'standby'), reason: fc.option(text) }),
        fc.constant(null),
      ),
      run: fc.option(
        fc.record({
          state: fc.option(text),
          protocol: fc.option(text),
          step: fc.option(fc.oneof(text, fc.integer())),
          progress: fc.option(fc.oneof(fc.double(), fc.constantFrom(0, 0.5, 1, 2, -1))),
        }),
      ),
      errors: fc.record({
        pending: fc.oneof(fc.nat(30), fc.double(), fc.constant('3')),
        list: fc.array(
          fc.oneof(
            fc.record({
              source: fc.constantFrom('A', 'B', 'AB'),
              id: fc.oneof(text, fc.integer()),
              title: text,
              severity: text,
              answerUrl: fc.option(fc.constantFrom('https://h/p?t=1', 'HTTP://h/p', 'javascript:alert(1)', 'data:x')),
              answerExpires: fc.option(fc.constantFrom('2020-01-01T00:00:00.000Z', 'soon')),
            }),
            fc.constant(null),
            fc.constant('e'),
          ),
          { maxLength: 25 },
        ),
      }),
      updatedAt: fc.option(text),
    });
    const msg = fc.oneof(
      anyDoc.map((payload) => ({ topic: 'lab/x/state', payload })),
      fc.constant({ topic: 'prune' }),
      fc.constant({ topic: 'lab/x/runs', payload: { event: 'finished' } }),
      fc.constant({ payload: null }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(msg, fc.nat(200_000)), { maxLength: 40 }), (steps) => {
        let ours: readonly FleetRow[] = [];
        let theirs: readonly FleetRow[] = [];
        let now = 0;
        for (const [m, wait] of steps) {
          now += wait;
          const next = foldFleet(ours, m, now);
          const got = run(theirs, m, now);
          assert.deepEqual(got.rows, next);
          assert.deepEqual(got.out, next === ours ? null : { payload: next }, 'sends the rows only when they changed');
          ours = next;
          theirs = got.rows;
        }
      }),
    );
  });

  it('clips names and texts at whole characters, never inside a surrogate pair (module and example 07 alike)', function () {
    // a name of 100 units or a text of 200 was cut at unit 99 / 199 by slice: an emoji straddling the cut left its
    // high half, a lone surrogate strict JSON readers refuse (the page's msg) and a browser shows as U+FFFD
    const run = exampleFold();
    const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
    console.log(`      fleet clip seed: ${seed} (LH_SEED=${seed} replays it)`);
    const lone = /\p{Cs}/u; // a surrogate half not in a pair
    const piece = fc.constantFrom('x', 'é', '\u{1f9ea}', '\u{20000}', ' ');
    const text = fc
      .tuple(fc.integer({ min: 35, max: 205 }), fc.array(piece, { minLength: 1, maxLength: 6 }))
      .map(([n, tail]) => 'x'.repeat(n) + tail.join(''));
    /** value is source clipped to max units: the longest start of whole characters within max - 1, then "…" */
    const clippedFrom = (value: string, source: string, max: number): void => {
      assert.doesNotMatch(value, lone, JSON.stringify(value));
      if (source.length <= max) return assert.equal(value, source);
      assert.ok(value.endsWith('…'), JSON.stringify(value));
      const kept = value.slice(0, -1);
      assert.ok(source.startsWith(kept) && kept.length <= max - 1, JSON.stringify(value));
      const next = [...source.slice(kept.length)][0];
      assert.ok(kept.length + next.length > max - 1, `${JSON.stringify(value)} left out more than it had to`);
    };
    fc.assert(
      fc.property(text, text, text, (name, long, stamp) => {
        const payload = doc(name, {
          connection: { state: 'offline', reason: long },
          run: { state: long, protocol: long, step: long, progress: null },
          errors: { pending: 1, list: [{ source: 'A', id: long, title: long, severity: long, answerUrl: null }] },
          updatedAt: stamp,
        });
        const ours = foldFleet([], { payload }, 1);
        assert.deepEqual(run([], { payload }, 1).rows, ours, 'example 07 clips as the module does');
        const row = ours[0];
        clippedFrom(row.instrument, name, 100);
        clippedFrom(row.updatedAt, stamp, 40);
        const e = row.errors[0];
        for (const value of [row.reason, row.run.state, row.run.protocol, row.run.step, e.id, e.title, e.severity])
          clippedFrom(value ?? '', long, 200);
      }),
      { seed, numRuns: process.env.LH_CASES ? Number(process.env.LH_CASES) : 100 },
    );
    // the case as found: an emoji across the 100th unit of a name
    const name = `${'x'.repeat(98)}\u{1f9ea}bay`;
    assert.equal(foldFleet([], { payload: doc(name) }, 1)[0].instrument, `${'x'.repeat(98)}…`);
    assert.equal((run([], { payload: doc(name) }, 1).rows[0] as FleetRow).instrument, `${'x'.repeat(98)}…`);
  });
});
