/**
 * Issue 29, findings 8–13 (the error policy), the pure parts: what "similar" means for a person's run-scoped answer,
 * which run a run-watch msg ends and for which instrument, the instrument's deadline for a zone-less date, rule
 * identity, and number inputs sent in the form they were checked in.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { checkInputs, DeclaredInput, inputProblem } from '../../src/nodes/answering/action-inputs';
import { INSTRUMENT_MARGIN_MS, instrumentDeadline } from '../../src/nodes/lh-error-policy/decision';
import { compileRules, ruleSignature } from '../../src/nodes/lh-error-policy/rules';
import { isOwnRun, isSimilar, RunRule, RunScope, runSighting, similarity } from '../../src/nodes/runs/run-scope';
import { migrate } from '../../src/nodes/shared/migrations';

type Msg = Record<string, unknown>;

function runRuleOn(record: Msg): RunRule {
  return { source: 'B', match: similarity(record), answer: '1', by: 'ann', at: 0, errorKey: 'e1', steadyAt: 0 };
}

describe('error policy trust (issue 29, findings 8–13)', function () {
  describe('8: "the same for similar errors" never crosses severity and never answers a Fatal error', function () {
    it('a rule chosen on an Error is not similar to a Fatal or a Warning with the same title or code', function () {
      const chosenOn = { uuid: 'u1', title: 'Liquid level not detected', severity: 'Error' };
      const rule = runRuleOn(chosenOn);
      assert.equal(isSimilar(rule, 'B', { uuid: 'u2', title: 'Liquid level not detected', severity: 'Error' }), true);
      assert.equal(isSimilar(rule, 'B', { uuid: 'u3', title: 'Liquid level not detected', severity: 'Fatal' }), false);
      assert.equal(isSimilar(rule, 'B', { uuid: 'u4', title: 'Liquid level not detected', severity: 'Warning' }), false);
      const coded = runRuleOn({ uuid: 'u5', code: 17, severity: 'Warning' });
      assert.equal(isSimilar(coded, 'B', { uuid: 'u6', code: '17', severity: 'warning' }), true, 'severity in any case');
      assert.equal(isSimilar(coded, 'B', { uuid: 'u7', code: 17, severity: 'Error' }), false);
    });

    it('a Fatal (or Critical) error is never similar, not even to a rule chosen on a Fatal error (property)', function () {
      fc.assert(
        fc.property(
          fc.constantFrom('Fatal', 'fatal', ' FATAL ', 'Critical'),
          fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
          fc.constantFrom('Clot', 'Door open'),
          (severity, code, title) => {
            const record = { uuid: 'u', title, severity, ...(code === undefined ? {} : { code }) };
            assert.equal(isSimilar(runRuleOn(record), 'B', { ...record, uuid: 'v' }), false);
          },
        ),
      );
    });
  });

  describe('9 and 10: which run a run-watch msg starts or ends, and whose', function () {
    const instrumentX = { name: 'X', baseUrl: 'http://127.0.0.1:8090', instrumentUrl: 'https://127.0.0.1:8443' };
    const instrumentY = { name: 'Y', baseUrl: 'http://127.0.0.1:9090', instrumentUrl: 'https://127.0.0.1:9443' };

    it("a run-watch msg names its instrument; another instrument's msg is not this policy's run", function () {
      const y = runSighting({
        topic: 'state',
        state: 'Running',
        payload: { protocolId: 1, startTime: 's' },
        instrument: instrumentY,
      });
      assert.ok(y);
      assert.equal(isOwnRun(y, instrumentX), false);
      assert.equal(isOwnRun(y, instrumentY), true);
      const yEnd = runSighting({ topic: 'finished', payload: { protocolId: 1, startTime: 's' }, instrument: instrumentY });
      assert.ok(yEnd);
      assert.equal(isOwnRun(yEnd, instrumentX), false);
      // the same instrument spelled with another case or a trailing slash; an A-only server (no B URL) of it
      const spelled = { name: 'x', baseUrl: 'HTTP://127.0.0.1:8090/', instrumentUrl: '' };
      assert.equal(isOwnRun({ ...y, instrument: spelled }, instrumentX), true);
      // a msg written by hand names no instrument: taken as the policy's own
      assert.equal(isOwnRun({ key: '1|s', phase: 'active' }, instrumentX), true);
    });

    it("the old run's finished, arriving after the new run's state, does not end the new run", function () {
      const scope = new RunScope();
      const state = (start: string): Msg => ({ topic: 'state', state: 'Running', payload: { protocolId: 4, startTime: start } });
      const finished = (start: string | null): Msg => ({
        topic: 'finished',
        payload: { protocolId: 4, protocolName: 'P4', startTime: start },
      });
      scope.sighting(runSighting(state('2026-11-24T10:00:00Z'))!, 1000);
      scope.occurrence('r', 'e1', 1100);
      assert.equal(scope.sighting(runSighting(state('2026-11-24T11:00:00Z'))!, 2000), true, 'the new run starts');
      assert.equal(scope.occurrence('r', 'e2', 2100), 0, 'the new run counts from its first error');
      assert.equal(scope.sighting(runSighting(finished('2026-11-24T10:00:00Z'))!, 2200), false, 'the old run ends nothing');
      assert.equal(scope.current(2300).key, '4|2026-11-24T11:00:00Z');
      assert.equal(scope.occurrence('r', 'e3', 2300), 1, 'the new run goes on counting');
      assert.equal(scope.sighting(runSighting(finished('2026-11-24T11:00:00Z'))!, 2400), true, 'its own finished ends it');
      assert.equal(scope.current(2500).kind, 'hour');
    });

    it('a finished msg of a run first seen without a start time ends it; Idle and a finished msg naming no run end any', function () {
      const scope = new RunScope();
      scope.sighting({ key: '4|', phase: 'active' }, 1000);
      assert.equal(scope.sighting(runSighting({ topic: 'finished', payload: { protocolId: 4, startTime: 's' } })!, 2000), true);
      scope.sighting({ key: '4|s2', phase: 'active' }, 3000);
      assert.equal(scope.sighting(runSighting({ topic: 'finished', payload: {} })!, 4000), true);
      scope.sighting({ key: '4|s3', phase: 'active' }, 5000);
      assert.equal(
        scope.sighting(runSighting({ topic: 'state', state: 'Idle', payload: { protocolRunState: 'Idle' } })!, 6000),
        true,
      );
    });
  });

  describe("11: the instrument's own timeout for a zone-less date is counted in UTC", function () {
    let zone: string | undefined;
    beforeEach(function () {
      zone = process.env.TZ;
    });
    afterEach(function () {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    });

    for (const tz of ['America/New_York', 'Asia/Kolkata', 'UTC']) {
      it(`seen 200 s after it was raised, timeoutSeconds 300: the deadline is 100 s from now (TZ=${tz})`, function () {
        process.env.TZ = tz;
        const raised = Date.parse('2026-11-24T10:00:00.000Z');
        const now = raised + 200_000;
        const deadline = instrumentDeadline({ timeoutSeconds: 300, date: '2026-11-24T10:00:00' }, now);
        assert.equal(deadline, raised + 300_000 - INSTRUMENT_MARGIN_MS);
        const fraction = instrumentDeadline({ timeoutSeconds: 300, date: '2026-11-24T10:00:00.1234567' }, now);
        assert.equal(fraction, raised + 123 + 300_000 - INSTRUMENT_MARGIN_MS, 'seven fraction digits, as .NET writes them');
        assert.equal(instrumentDeadline({ timeoutSeconds: 300, date: '2026-11-24T05:00:00-05:00' }, now), deadline);
      });
    }
  });

  describe('12: a rule has a stable identity, and its counts do not depend on its position', function () {
    const clot = { source: 'B', pattern: 'clot', steps: [{ mode: 'walk-away', answer: '1' }] };
    const door = { source: 'B', pattern: 'door', steps: [{ mode: 'manual' }] };

    it('a rule added above keeps the ladder key of the rules below (with and without saved ids)', function () {
      const [before] = compileRules([clot]);
      const after = compileRules([door, clot]);
      assert.equal(after[1].index, 1);
      assert.equal(ruleSignature(after[1]), ruleSignature(before));
      const [withId] = compileRules([{ ...clot, id: 'clots' }]);
      const aboveWithId = compileRules([
        { ...door, id: 'door' },
        { ...clot, id: 'clots' },
      ]);
      assert.equal(ruleSignature(aboveWithId[1]), ruleSignature(withId));
    });

    it('migration 2 → 3 gives every saved rule the id derived from what it matches, the same on every start', function () {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              source: fc.constantFrom('any', 'A', 'B'),
              minSeverity: fc.constantFrom('', 'Error', 'Fatal'),
              pattern: fc.constantFrom('', 'clot', 'door', 'level'),
              code: fc.constantFrom('', '1', '2'),
            }),
            { maxLength: 8 },
          ),
          fc.nat(),
          (matches, at) => {
            const rules = matches.map((m) => ({ ...m, steps: [{ mode: 'manual', answer: '', delay: 120, inputs: '' }] }));
            const migrated = migrate({ id: 'p', type: 'lh-error-policy', version: 2, rules });
            assert.equal(migrated.version, 3);
            const ids = (migrated.rules as unknown as { id: string }[]).map((r) => r.id);
            assert.equal(new Set(ids).size, ids.length, 'unique');
            assert.deepEqual(
              migrate({ id: 'p', type: 'lh-error-policy', version: 2, rules: structuredClone(rules) }).rules,
              migrated.rules,
              'deterministic',
            );
            assert.deepEqual(
              compileRules(rules).map((r) => r.id),
              ids,
              'the runtime derives the same ids for rules without one',
            );
            // a new first rule (with its own id, as the dialog gives it) leaves every other id as it was
            const added = [
              { id: 'new-rule', source: 'A', pattern: 'x', steps: [{ mode: 'manual' }] },
              ...(migrated.rules as Msg[]),
            ];
            assert.deepEqual(
              compileRules(added)
                .slice(1)
                .map((r) => r.id),
              ids,
            );
            void at;
          },
        ),
      );
    });

    it('refuses a rule id that is not text, too long, or used twice, naming the rule', function () {
      assert.throws(
        () =>
          compileRules([
            { ...clot, id: 'a' },
            { ...door, id: 'a' },
          ]),
        /rules\[1\]\.id must be unique/,
      );
      assert.throws(() => compileRules([{ ...clot, id: 7 }]), /rules\[0\]\.id must be 1 to 64 letters/);
      assert.throws(() => compileRules([{ ...clot, id: 'x'.repeat(65) }]), /rules\[0\]\.id must be 1 to 64/);
    });

    it('counts 0.3 saved under the rule position are taken over once (adopt)', function () {
      const scope = new RunScope();
      scope.sighting({ key: 'p|r', phase: 'active' }, 0);
      scope.occurrence('old', 'e1', 1);
      scope.occurrence('old', 'e2', 1);
      scope.adopt('old', 'new');
      assert.equal(scope.occurrence('new', 'e3', 2), 2);
      assert.equal(scope.occurrence('new', 'e1', 2), 0, 'the same error keeps its step');
      assert.equal(scope.peek('new', 'e9', 2), 3, 'peek tells the next step without recording it');
      assert.equal(scope.occurrence('new', 'e9', 2), 3);
    });
  });

  describe('13: a number input is sent in the form it was checked in', function () {
    const height: DeclaredInput = { id: 1, description: 'Height', type: 'number', min: 0.5, max: 10, unit: 'mm', required: true };
    const count: DeclaredInput = { id: 2, description: 'Count', type: 'integer', min: 1, max: 10, required: true };

    it('0x5, 0b101, 0o5, 5e0, 1_0, Infinity and more than 15 significant digits are refused: nothing is sent', function () {
      for (const value of ['0x5', '0b101', '0o5', '5e0', '5E0', '1_0', 'Infinity', ' 0x5 ', '0.49999999999999999', '5,0']) {
        assert.ok(inputProblem(height, value), `${JSON.stringify(value)} refused`);
        assert.throws(
          () => checkInputs({ declared: [height], given: new Map([[1, value]]), actionId: 2 }, 'test'),
          /inputs\.1 \(Height, a number from 0\.5 to 10 mm\) must be/,
        );
      }
      for (const value of ['5.0', '0x5', '5e0', '+5.'])
        assert.ok(inputProblem(count, value), `${value} refused as a whole number`);
    });

    it('whatever text passes the check, the number the instrument reads from the text sent is the one checked (property)', function () {
      const texts = fc.oneof(
        fc.double({ min: -20, max: 20, noNaN: true }).map(String),
        fc.integer({ min: -20, max: 20 }).map(String),
        fc.stringMatching(/^[+-]?(0x|0b|0o)?[0-9a-f]{0,4}(\.[0-9]{0,3})?([eE][+-]?[0-9])?$/),
        fc.constantFrom('5', '05', '+5', '-0', '.5', '5.', '10.000', '0.5', '0.4999999999999999', '10.0000000000001'),
      );
      fc.assert(
        fc.property(texts, fc.constantFrom(height, count), (text, input) => {
          let sent: string | undefined;
          try {
            sent = checkInputs({ declared: [input], given: new Map([[input.id, text]]), actionId: 2 }, 'test')?.[0]?.value;
          } catch {
            return; // refused: nothing sent
          }
          assert.ok(sent !== undefined);
          // what a decimal parser (the instrument's) reads from the text sent
          assert.match(sent, /^[+-]?(\d+\.?\d*|\.\d+)$/, 'plain decimal digits only');
          const read = Number(sent);
          assert.ok(read >= input.min! && read <= input.max!, `${sent} within the range`);
          if (input.type === 'integer') assert.match(sent, /^[+-]?\d+$/);
        }),
      );
    });
  });
});
