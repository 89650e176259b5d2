/**
 * Review finding: the instrument matches property names in any letter case (an ASP.NET service, observed-instrument.md)
 * and answers in camelCase. A desired step written with `Duration` (the tested client sends PascalCase) was not checked
 * against the type of `duration` (a text went to the instrument), and never matched the instrument's `duration`: every
 * plan showed an update again, so "a plan made after an apply is empty" did not hold. Two fields that differ only in
 * letter case (`duration` and `Duration`) are one field to the instrument, with no saying which value it keeps. Both
 * are now refused by readDesired, naming the field and the spelling to use, before anything is sent.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { STEP_VARIANT_FIELDS } from '../../src/contract/instrument-contract';
import { readDesired, readInstrumentProtocol } from '../../src/nodes/lh-protocol/export-format';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';

const pause = (own: Record<string, unknown>): unknown => ({
  steps: [{ name: 'Pause', stepType: 'PauseStep', disabled: false, ...own }],
});

describe('review: lh-protocol step fields in another letter case', function () {
  it('a typed field in another letter case is refused, naming the spelling (its type was not checked)', function () {
    assert.throws(
      () => readDesired(pause({ Duration: 'not a number' }), 'plan'),
      (err: Error) => /Duration/.test(err.message) && /duration/.test(err.message.replace('Duration', '')),
    );
  });

  it('two fields that differ only in letter case are refused (the instrument takes them as one)', function () {
    assert.throws(
      () => readDesired(pause({ duration: 30, DURATION: 45 }), 'plan'),
      /DURATION.*letter case|letter case.*DURATION/,
    );
    assert.throws(() => readDesired(pause({ lidNote: 'a', LidNote: 'b' }), 'plan'), /letter case/);
  });

  it('property: every known variant field in any other letter case is refused; in its own spelling it is kept', function () {
    const fields = Object.entries(STEP_VARIANT_FIELDS).flatMap(([type, f]) =>
      Object.keys(f ?? {}).map((name) => ({ type, name })),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...fields),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        ({ type, name }, flips) => {
          const spelled = [...name].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c.toLowerCase())).join('');
          const desired = { steps: [{ name: 'S', stepType: type, [spelled]: null }] };
          if (spelled === name) assert.equal(readDesired(desired, 'plan')[0][name], null);
          else assert.throws(() => readDesired(desired, 'plan'), new RegExp(`write it as ${name}`));
        },
      ),
    );
  });

  it('an instrument answering PascalCase exports the specification spelling (others as the client reads them); that export plans no change', function () {
    const answered = {
      Name: 'P',
      Steps: [{ Id: 4, Name: 'Pause', StepType: 'PauseStep', StepOrder: 1, Disabled: false, Duration: 30, Note: 'x' }],
    };
    const read = readInstrumentProtocol(answered, 'export');
    assert.deepEqual(read.export.steps[0], { name: 'Pause', stepType: 'PauseStep', disabled: false, duration: 30, note: 'x' });
    assert.deepEqual(planChanges(read.export, readDesired(read.export, 'plan')).changes, []);
  });
});
