import assert from 'node:assert/strict';

import fc from 'fast-check';

import { decide } from '../../src/nodes/lh-error-policy/decision';
import { compileRules, ruleSignature } from '../../src/nodes/lh-error-policy/rules';
import { RunScope, runSighting } from '../../src/nodes/runs/run-scope';
import { migrate, rulesToLadders } from '../../src/nodes/shared/migrations';

const HOUR = 3600_000;

const events = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('start' as const), run: fc.integer({ min: 0, max: 3 }) }), weight: 1 },
    { arbitrary: fc.constant({ kind: 'end' as const }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 2 * HOUR }) }), weight: 1 },
    {
      arbitrary: fc.record({
        kind: fc.constant('error' as const),
        rule: fc.integer({ min: 0, max: 2 }),
        error: fc.integer({ min: 0, max: 6 }),
      }),
      weight: 5,
    },
  ),
  { maxLength: 60 },
);

/** Three rules (A errors, matched by code), each a walk-away ladder whose answers name the rule and the step. */
const rules = compileRules(
  [0, 1, 2].map((r) => ({
    source: 'A',
    code: String(r),
    steps: Array.from({ length: r + 1 }, (_, s) => ({ mode: 'walk-away', answer: `rule${r}-step${s + 1}` })),
  })),
);

describe('recovery ladders (property)', function () {
  it('for any sequence of errors and runs, a new error gets the step of its rule for its rank in the run or hour, kept when raised again', function () {
    fc.assert(
      fc.property(events, fc.integer({ min: 0, max: 10 * HOUR }), (seq, start) => {
        const scope = new RunScope();
        let now = start;
        // the model: the scope changes on a new run, on its end, and (no run active) on a new clock hour
        let run: number | undefined;
        let instance = 0;
        let hour = Math.floor(now / HOUR);
        const seen = new Map<string, number[]>(); // `${instance}|${rule}` → distinct new errors in order
        // an error decided in an earlier run or hour, raised again, keeps its step (review63): `${rule}:${error}` → step
        const decided = new Map<string, number>();
        for (const e of seq) {
          if (e.kind === 'wait') {
            now += e.ms;
            if (run === undefined && Math.floor(now / HOUR) !== hour) instance++;
            hour = Math.floor(now / HOUR);
          } else if (e.kind === 'start') {
            scope.sighting({ key: `p|run${e.run}`, phase: 'active' }, now);
            if (run !== e.run) instance++;
            run = e.run;
          } else if (e.kind === 'end') {
            scope.sighting({ key: '', phase: 'ended' }, now);
            if (run !== undefined) instance++;
            run = undefined;
          } else {
            const rule = rules[e.rule];
            const key = `${instance}|${e.rule}`;
            const list = seen.get(key) ?? [];
            if (!decided.has(`${e.rule}:${e.error}`)) list.push(e.error);
            seen.set(key, list);
            const expected = decided.get(`${e.rule}:${e.error}`) ?? Math.min(list.indexOf(e.error), rule.steps.length - 1) + 1;
            decided.set(`${e.rule}:${e.error}`, expected);
            // the error id names its rule too: the same id under two rules is two errors
            const occurrence = scope.occurrence(ruleSignature(rule), `${e.rule}:${e.error}`, now);
            const d = decide(rule, 'A', { id: String(e.error), code: e.rule }, now, occurrence);
            assert.equal(d.kind, 'answer-now');
            if (d.kind !== 'answer-now') return;
            assert.equal(d.answer, `rule${e.rule}-step${expected}`);
            assert.equal(d.rung.number, expected);
            assert.equal(d.rung.rule.index, e.rule, 'never a step of another rule');
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a semi-automatic default never waits past the rule's delay nor past the B error's own timeout", function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3600 }),
        fc.integer({ min: 1, max: 3600 }),
        fc.integer({ min: -600_000, max: 4_000_000 }),
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        (delay, timeoutSeconds, age, now) => {
          const [rule] = compileRules([{ source: 'B', steps: [{ mode: 'semi-automatic', answer: '1', delay }] }]);
          const raised = now - age;
          const d = decide(
            rule,
            'B',
            { uuid: 'u', actions: [{ id: 1 }], timeoutSeconds, date: new Date(raised).toISOString() },
            now,
          );
          assert.equal(d.kind, 'schedule');
          if (d.kind !== 'schedule') return;
          assert.ok(d.deadline >= now, 'never in the past');
          assert.ok(d.deadline <= now + delay * 1000, "never after the rule's delay");
          const base = age >= 0 && age < timeoutSeconds * 1000 ? raised : now; // a date in the future or past the timeout: when seen
          assert.ok(d.deadline <= Math.max(now, base + timeoutSeconds * 1000), "never after the instrument's own timeout");
          assert.equal(d.deadlineBy, d.deadline < now + delay * 1000 ? 'instrument' : 'rule');
        },
      ),
    );
  });

  it('a restart in the middle of a run keeps the counts (snapshot and restore)', function () {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 5 }),
        (before, next) => {
          const a = new RunScope();
          a.sighting({ key: 'p|r', phase: 'active' }, 1000);
          for (const e of before) a.occurrence('rule', String(e), 2000);
          const b = new RunScope();
          b.restore(JSON.parse(JSON.stringify(a.snapshot())));
          assert.equal(b.occurrence('rule', String(next), 3000), a.occurrence('rule', String(next), 3000));
        },
      ),
    );
  });

  it("run-watch messages: a state other than Idle is the run (its protocol and start); Idle and 'finished' end it", function () {
    assert.deepEqual(
      runSighting({ topic: 'state', state: 'Running', payload: { protocolId: 4, startTime: '2026-01-01T00:00:00Z' } }),
      {
        key: '4|2026-01-01T00:00:00Z',
        phase: 'active',
      },
    );
    assert.deepEqual(
      runSighting({ topic: 'state', state: 'Loading', payload: { protocolId: 4, startTime: '0001-01-01T00:00:00' } }),
      {
        key: '4|',
        phase: 'active',
      },
    );
    assert.equal(runSighting({ topic: 'state', state: 'Idle', payload: {} })?.phase, 'ended');
    assert.equal(runSighting({ topic: 'finished', payload: {} })?.phase, 'ended');
    assert.equal(runSighting({ topic: 'progress', payload: {} }), undefined);
    assert.equal(runSighting({ payload: { id: 'e1' } }), undefined, 'an error msg is not a run');
    assert.equal(runSighting({ topic: 'finished', event: 'raised', payload: { id: 'e1', title: 'finished' } }), undefined);
  });

  it('migration 1 → 2: a rule saved with one answer is a one-step ladder that decides as it did', function () {
    fc.assert(
      fc.property(
        fc.constantFrom('manual', 'semi-automatic', 'walk-away'),
        fc.constantFrom('', 'Retry', 'Abort'),
        fc.integer({ min: 0, max: 600 }),
        (mode, answer, delay) => {
          const old = { source: 'A', minSeverity: '', pattern: '', code: '', mode, answer, delay };
          const migrated = migrate({ id: 'p', type: 'lh-error-policy', version: 1, rules: [old] });
          assert.equal(migrated.version, 3);
          const [{ id, ...ladder }] = migrated.rules as unknown as { id: string }[];
          assert.match(id, /^r[0-9a-f]{16}$/, 'and 2 → 3 gives it an id (derived from what it matches)');
          assert.deepEqual(
            [ladder],
            [{ source: 'A', minSeverity: '', pattern: '', code: '', steps: [{ mode, answer, delay, inputs: '' }] }],
          );
          const record = { id: 'e', title: 't', errorResponses: ['Retry', 'Abort'] };
          const [before] = compileRules([old]);
          const [after] = compileRules(migrated.rules);
          assert.deepEqual(decide(after, 'A', record, 0, 5), decide(before, 'A', record, 0, 5));
        },
      ),
    );
    const kept = { rules: [{ source: 'B', steps: [{ mode: 'walk-away', answer: '1' }] }] };
    rulesToLadders(kept);
    assert.deepEqual(
      kept.rules,
      [{ source: 'B', steps: [{ mode: 'walk-away', answer: '1' }] }],
      'a rule with steps stays as it is',
    );
  });

  it('refuses a ladder that is empty, too long, or has a bad step, naming the step', function () {
    assert.throws(() => compileRules([{ steps: [] }]), /rules\[0\]\.steps must be a list of at least one step/);
    assert.throws(
      () => compileRules([{ steps: Array.from({ length: 11 }, () => ({ mode: 'manual' })) }]),
      /rules\[0\]\.steps must have at most 10 steps/,
    );
    assert.throws(
      () => compileRules([{ steps: [{ mode: 'manual' }, { mode: 'often' }] }]),
      /rules\[0\]\.steps\[1\]\.mode must be one of/,
    );
    assert.throws(
      () => compileRules([{ source: 'B', steps: [{ mode: 'walk-away', answer: 'Skip' }] }]),
      /rules\[0\]\.steps\[0\]\.answer must be an action id/,
    );
    assert.throws(
      () => compileRules([{ steps: [{ mode: 'walk-away', inputs: 'height' }] }]),
      /rules\[0\]\.steps\[0\]\.inputs must be written id=value/,
    );
    assert.deepEqual(compileRules([{ steps: [{ mode: 'walk-away', inputs: '1=2.5, 3 = abc' }] }])[0].steps[0].inputs, {
      1: '2.5',
      3: 'abc',
    });
  });
});
