/**
 * The instrument answers names in any letter case (`ID`, `StepType`, `TOKEN`); the client maps each one to its own
 * spelling whatever case came before it. The mapping keeps the names it has seen (issue 22.6): over generated
 * answers, with the same name spelled differently from one answer to the next, every answer maps as the first one
 * did, and a name made known later (addKnownFields) is used from then on, also for a spelling already seen.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { addKnownFields, fieldName, FORBIDDEN_KEYS, keptFieldNames, normaliseKeys } from '../../src/client/field-names';

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

/** normaliseKeys of e7dc281 (before the kept table), the reference the kept table must agree with. */
function referenceNormalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(referenceNormalise);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (FORBIDDEN_KEYS.has(k)) continue;
    out[fieldName(k)] = referenceNormalise(v);
  }
  return out;
}

/**
 * Names made known during the test: vendor names no other test uses, in any letter case (the table of known names is
 * the process's: a generated 'ID' made known here would change every later test's answers).
 */
const VENDOR = ['vendorPlateCode', 'vendorTipRack', 'vendorDeckSlot'];
const vendorSpelling = fc
  .tuple(fc.constantFrom(...VENDOR), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }))
  .map(([name, flips]) => spelled(name, flips));

const anyKey = fc.oneof(
  vendorSpelling,
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  spelling.map((s) => s.as),
  fc.constantFrom('__proto__', 'Constructor', 'PROTOTYPE', 'İd', 'ΣTEP', '', 'I', 'toString', 'hasOwnProperty'),
);
const answer = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyKey, tie('value'), { maxKeys: 6 }),
  ),
})).value;

describe('answer property names: the kept table against the mapping without it (e7dc281)', () => {
  it('maps any answer exactly as before, also as JSON text with prototype keys, with names made known between answers', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(answer, fc.option(vendorSpelling)), { maxLength: 6 }), (answers) => {
        for (const [value, known] of answers) {
          if (known !== null) addKnownFields([known]);
          const parsed: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
          assert.deepStrictEqual(normaliseKeys(parsed), referenceNormalise(parsed));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('holds a bounded table: many distinct names, and long ones, keep it small', () => {
    for (let i = 0; i < 50; i++) {
      normaliseKeys(Object.fromEntries(Array.from({ length: 2000 }, (_, j) => [`Vendor${i}_${j}`, j])));
    }
    const many = keptFieldNames();
    assert.ok(many.count <= 4096, `${many.count} names kept`);
    // names as long as an answer may carry: 64 answers of 16 names of 64 KiB each
    for (let i = 0; i < 64; i++) {
      const body: Record<string, number> = {};
      for (let j = 0; j < 16; j++) body[`K${i}_${j}_`.padEnd(64 * 1024, 'x')] = j;
      const mapped = normaliseKeys(body) as Record<string, number>;
      assert.equal(Object.keys(mapped).length, 16);
    }
    const long = keptFieldNames();
    assert.ok(long.chars <= 1024 * 1024, `${long.chars} characters of names kept`);
  });
});
