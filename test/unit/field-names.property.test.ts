/**
 * The instrument answers names in any letter case (`ID`, `StepType`, `TOKEN`); the client maps each one to its own
 * spelling whatever case came before it. The mapping keeps the names it has seen (issue 22.6): over generated
 * answers, with the same name spelled differently from one answer to the next, every answer maps as the first one
 * did, and a name made known later (addKnownFields) is used from then on, also for a spelling already seen.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addKnownFields, normaliseKeys } from '../../src/client/field-names';

const KNOWN = ['stepType', 'id', 'name', 'stepOrder', 'disabled', 'totalItemCount', 'errorResponses', 'selectedResponse'];

/** A spelling of `name` with each letter's case flipped where `flips` says so. */
function spelled(name: string, flips: boolean[]): string {
  return [...name].map((ch, i) => (flips[i % flips.length] ? ch.toUpperCase() : ch.toLowerCase())).join('');
}

const spelling = fc
  .tuple(fc.constantFrom(...KNOWN), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }))
  .map(([name, flips]) => ({ name, as: spelled(name, flips) }));

describe('answer property names in any letter case (kept mapping)', () => {
  it('maps every spelling of a known name to the known name, in every answer of a sequence', () => {
    fc.assert(
      fc.property(fc.array(fc.array(spelling, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 10 }), (answers) => {
        for (const fields of answers) {
          const body = Object.fromEntries(fields.map((f, i) => [f.as, i]));
          const mapped = normaliseKeys([{ nested: body }]) as [{ nested: Record<string, number> }];
          for (const f of fields) assert.ok(f.name in mapped[0].nested, `${f.as} -> ${f.name}`);
          for (const key of Object.keys(mapped[0].nested)) assert.ok(KNOWN.includes(key), `unexpected ${key}`);
        }
      }),
    );
  });

  it('gives an unknown name its first letter in lower case, and a name made known later its known spelling', () => {
    const unknown = 'PlateBarcodeXyz';
    assert.deepEqual(normaliseKeys({ [unknown]: 1 }), { plateBarcodeXyz: 1 });
    addKnownFields(['plateBARCODExyz']);
    assert.deepEqual(normaliseKeys({ [unknown]: 1 }), { plateBARCODExyz: 1 });
  });

  it('leaves prototype keys out of an answer', () => {
    assert.deepEqual(normaliseKeys(JSON.parse('{"__proto__": {"x": 1}, "Name": "a"}')), { name: 'a' });
  });
});
