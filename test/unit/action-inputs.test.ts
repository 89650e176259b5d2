import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { checkInputs, DeclaredInput, declaredInputs, givenInputs, inputProblem } from '../../src/nodes/answering/action-inputs';
import { answerB } from '../../src/nodes/answering/answer-error';

const UUID = '3f0c8a4e-1b2d-4c5e-8f90-123456789abc';

const declaredInput = fc.record({
  id: fc.integer({ min: 1, max: 5 }),
  type: fc.constantFrom('number', 'integer', 'text') as fc.Arbitrary<'number' | 'integer' | 'text'>,
  min: fc.integer({ min: -10, max: 10 }),
  span: fc.integer({ min: 0, max: 20 }),
  required: fc.boolean(),
});

/** An action's declared inputs (distinct ids), as an error record lists them. */
const action = fc.uniqueArray(declaredInput, { selector: (d) => d.id, minLength: 1, maxLength: 4 }).map((inputs) => ({
  id: 2,
  description: 'Retry with new values',
  isRecovery: true,
  inputs: inputs.map((d) =>
    d.type === 'text'
      ? { id: d.id, description: `input ${d.id}`, type: 'text', required: d.required }
      : { id: d.id, description: `input ${d.id}`, type: d.type, min: d.min, max: d.min + d.span, required: d.required },
  ),
}));

function validValue(d: DeclaredInput): fc.Arbitrary<string> {
  if (d.type === 'text') return fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== '');
  const min = d.min ?? -1000;
  const max = d.max ?? 1000;
  return fc.integer({ min, max }).map(String);
}

/** A value the input never accepts, or undefined when its type accepts anything (text). */
function badValue(d: DeclaredInput): fc.Arbitrary<string> | undefined {
  if (d.type === 'text') return d.required ? fc.constantFrom('', '   ') : undefined;
  const out: fc.Arbitrary<string>[] = [fc.constantFrom('abc', '', 'NaN', '1e999', '--1')];
  if (d.max !== undefined) out.push(fc.integer({ min: d.max + 1, max: d.max + 1000 }).map(String));
  if (d.min !== undefined) out.push(fc.integer({ min: d.min - 1000, max: d.min - 1 }).map(String));
  if (d.type === 'integer') out.push(fc.constant(`${d.min ?? 0}.5`));
  return fc.oneof(...out);
}

/** Any client access would be a request: none may happen for a refused answer. */
const untouchable = new Proxy({} as LiquidHandlerClient, {
  get(_t, prop) {
    throw new Error(`the client was used (${String(prop)}) for an answer that had to be refused`);
  },
});

describe('action inputs (property)', function () {
  it('valid values for every required input are sent as {id, value}, in the declared order', function () {
    fc.assert(
      fc.property(
        action.chain((a) => {
          const declared = declaredInputs({ actions: [a] }, 2);
          return fc.tuple(fc.constant(declared), fc.tuple(...declared.map(validValue)));
        }),
        ([declared, values]) => {
          const given = new Map(declared.map((d, i) => [d.id, values[i]]));
          const out = checkInputs({ declared, given, actionId: 2 }, 'test');
          assert.deepEqual(
            out,
            declared.map((d, i) => ({ id: d.id, value: values[i].trim() })),
          );
        },
      ),
    );
  });

  it('a bad value, a missing required input or an unknown id is always refused naming inputs.<id>, and nothing is sent', async function () {
    const cases = action.chain((a) => {
      const declared = declaredInputs({ actions: [a] }, 2);
      const breakable = declared.filter((d) => badValue(d) !== undefined || d.required);
      const breaks = fc.oneof(
        ...(breakable.length > 0
          ? [
              fc.constantFrom(...breakable).chain((d) =>
                d.required && badValue(d) === undefined
                  ? fc.constant({ id: d.id, bad: undefined as string | undefined })
                  : fc.tuple(fc.boolean(), badValue(d) as fc.Arbitrary<string>).map(([omit, bad]) => ({
                      id: d.id,
                      bad: omit && d.required ? undefined : bad,
                    })),
              ),
            ]
          : []),
        fc.integer({ min: 6, max: 99 }).map((id) => ({ id, bad: '1' as string | undefined, unknown: true })),
      );
      return fc.tuple(fc.constant(a), fc.constant(declared), fc.tuple(...declared.map(validValue)), breaks);
    });
    await fc.assert(
      fc.asyncProperty(cases, async ([a, declared, values, broken]) => {
        const given: Record<string, string> = {};
        declared.forEach((d, i) => (given[d.id] = values[i]));
        if (broken.bad === undefined) delete given[broken.id];
        else given[broken.id] = broken.bad;

        const error = { uuid: UUID, title: 'Clot', actions: [a] };
        assert.throws(
          () => checkInputs({ declared, given: givenInputs(given, 'inputs', 'test'), actionId: 2 }, 'test'),
          (err: unknown) => err instanceof LhError && err.kind === 'validation' && err.field === `inputs.${broken.id}`,
        );
        const outcome = await answerB(untouchable, error as never, 2, 'nodered1', 'someone', undefined, { values: given });
        assert.equal(outcome.outcome, 'refused');
        if (outcome.outcome === 'refused') assert.equal(outcome.error.field, `inputs.${broken.id}`);
      }),
      { numRuns: 200 },
    );
  });

  it('an action that declares a required input is never sent without one (a policy may use the declared default)', async function () {
    const error = {
      uuid: UUID,
      actions: [
        {
          id: 2,
          description: 'Retry higher',
          isRecovery: true,
          inputs: [{ id: 1, description: 'Height', defaultValue: '2', min: 0, max: 5 }],
        },
      ],
    };
    const outcome = await answerB(untouchable, error as never, 2, 'nodered1');
    assert.equal(outcome.outcome, 'refused');
    if (outcome.outcome === 'refused')
      assert.match(outcome.message, /^inputs\.1 \(Height, a number from 0 to 5\) is required by action 2: nothing was sent/);
    const declared = declaredInputs(error, 2);
    assert.deepEqual(checkInputs({ declared, given: new Map(), actionId: 2, useDefaults: true }, 'test'), [
      { id: 1, value: '2' },
    ]);
  });

  it('reads declared inputs leniently (type from the default, optional inputs, options) and explains the range', function () {
    const [d] = declaredInputs(
      { actions: [{ id: 7, inputs: [{ id: 3, description: 'Volume', defaultValue: '10', maximum: 50, unit: 'µl' }] }] },
      7,
    );
    assert.equal(d.type, 'number');
    assert.equal(d.required, true);
    assert.equal(inputProblem(d, '51'), 'must be a number of at most 50 µl');
    assert.equal(inputProblem(d, '50'), undefined);
    const [o] = declaredInputs(
      { actions: [{ id: 7, inputs: [{ id: 4, description: 'Side', options: ['left', 'right'], required: false }] }] },
      7,
    );
    assert.equal(o.required, false);
    assert.equal(inputProblem(o, 'up'), 'must be one of left, right');
    assert.deepEqual(checkInputs({ declared: [o], given: new Map(), actionId: 7 }, 'test'), []);
  });
});
